//! The wire mirrors of the exec and search ports' requests and answers.

use super::*;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct SandboxWire {
    /// `off`, `workspace-write` or `read-only`.
    pub(crate) mode: String,
    pub(crate) writable: Vec<WPath>,
    /// Places inside the writable ones that commands may only read (`.git/`, `--protect`).
    pub(crate) read_only: Vec<WPath>,
    pub(crate) deny_network: bool,
    pub(crate) run_unsandboxed: bool,
}

impl From<&SandboxPolicy> for SandboxWire {
    fn from(policy: &SandboxPolicy) -> SandboxWire {
        SandboxWire {
            mode: policy.mode.as_str().to_owned(),
            writable: policy.writable.iter().map(|dir| wpath(dir)).collect(),
            read_only: policy.read_only.iter().map(|dir| wpath(dir)).collect(),
            deny_network: policy.deny_network,
            run_unsandboxed: policy.fallback == SandboxFallback::RunUnsandboxed,
        }
    }
}

impl SandboxWire {
    /// The policy; an unknown mode (from a newer near side) is refused.
    pub(crate) fn policy(self) -> Result<SandboxPolicy, String> {
        let mode = if self.mode.is_empty() {
            SandboxMode::Off
        } else {
            self.mode.parse::<SandboxMode>()?
        };
        Ok(SandboxPolicy {
            mode,
            writable: self.writable.into_iter().map(path).collect(),
            read_only: self.read_only.into_iter().map(path).collect(),
            deny_network: self.deny_network,
            fallback: if self.run_unsandboxed {
                SandboxFallback::RunUnsandboxed
            } else {
                SandboxFallback::Refuse
            },
        })
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ExecWire {
    program: WPath,
    args: Vec<Vec<u8>>,
    cwd: WPath,
    env: Vec<(Vec<u8>, Vec<u8>)>,
    inherit_env: bool,
    timeout_ms: Option<u64>,
    idle_grace_ms: u64,
    sandbox: SandboxWire,
    /// 0 `/dev/null`, 1 a pipe, 2 a pseudo-terminal; input arrives as
    /// [`ToServer::Input`].
    stdin: u8,
}

impl From<&ExecRequest> for ExecWire {
    fn from(request: &ExecRequest) -> ExecWire {
        ExecWire {
            program: wpath(&request.program),
            args: request.args.iter().map(|arg| wos(arg)).collect(),
            cwd: wpath(&request.cwd),
            env: request
                .env
                .iter()
                .map(|(key, value)| (wos(key), wos(value)))
                .collect(),
            inherit_env: request.inherit_env,
            timeout_ms: request
                .timeout
                .map(|timeout| u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX)),
            idle_grace_ms: u64::try_from(request.idle_grace.as_millis()).unwrap_or(u64::MAX),
            sandbox: (&request.sandbox).into(),
            stdin: match request.stdin {
                StdinMode::Null => 0,
                StdinMode::Pipe => 1,
                StdinMode::Tty => 2,
            },
        }
    }
}

impl ExecWire {
    pub(crate) fn request(self) -> Result<ExecRequest, String> {
        let mut request = ExecRequest::new(
            path(self.program),
            self.args.into_iter().map(os).collect(),
            path(self.cwd),
        );
        request.env = self
            .env
            .into_iter()
            .map(|(key, value)| (os(key), os(value)))
            .collect();
        request.inherit_env = self.inherit_env;
        request.timeout = self.timeout_ms.map(Duration::from_millis);
        request.idle_grace = Duration::from_millis(self.idle_grace_ms);
        request.sandbox = self.sandbox.policy()?;
        request.stdin = match self.stdin {
            0 => StdinMode::Null,
            1 => StdinMode::Pipe,
            2 => StdinMode::Tty,
            other => return Err(format!("unknown stdin mode {other}")),
        };
        Ok(request)
    }
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct ExecOutcomeWire {
    /// Exit code, or `None` when a signal ended the process.
    code: Option<i32>,
    signal: i32,
    /// 0 exited, 1 timed out, 2 cancelled.
    termination: u8,
}

impl From<ExecOutcome> for ExecOutcomeWire {
    fn from(outcome: ExecOutcome) -> ExecOutcomeWire {
        let (code, signal) = match outcome.status {
            ExitStatus::Code(code) => (Some(code), 0),
            ExitStatus::Signal(signal) => (None, signal),
        };
        ExecOutcomeWire {
            code,
            signal,
            termination: match outcome.termination {
                Termination::Exited => 0,
                Termination::TimedOut => 1,
                Termination::Cancelled => 2,
            },
        }
    }
}

impl From<ExecOutcomeWire> for ExecOutcome {
    fn from(wire: ExecOutcomeWire) -> ExecOutcome {
        ExecOutcome {
            status: match wire.code {
                Some(code) => ExitStatus::Code(code),
                None => ExitStatus::Signal(wire.signal),
            },
            termination: match wire.termination {
                1 => Termination::TimedOut,
                2 => Termination::Cancelled,
                _ => Termination::Exited,
            },
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct GrepWire {
    pattern: String,
    root: WPath,
    glob: Option<String>,
    ignore_case: bool,
    literal: bool,
    context: u64,
    limit: u64,
}

impl From<&GrepRequest> for GrepWire {
    fn from(request: &GrepRequest) -> GrepWire {
        GrepWire {
            pattern: request.pattern.clone(),
            root: wpath(&request.root),
            glob: request.glob.clone(),
            ignore_case: request.ignore_case,
            literal: request.literal,
            context: request.context as u64,
            limit: request.limit as u64,
        }
    }
}

impl From<GrepWire> for GrepRequest {
    fn from(wire: GrepWire) -> GrepRequest {
        GrepRequest {
            pattern: wire.pattern,
            root: path(wire.root),
            glob: wire.glob,
            ignore_case: wire.ignore_case,
            literal: wire.literal,
            context: usize::try_from(wire.context).unwrap_or(usize::MAX),
            limit: usize::try_from(wire.limit).unwrap_or(usize::MAX),
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct GrepOutputWire {
    /// (path, line number, text, is match)
    lines: Vec<(String, u64, String, bool)>,
    match_count: u64,
    limit_reached: bool,
    oversized: Vec<String>,
    oversized_count: u64,
    /// (path, offset of the first NUL byte)
    binary: Vec<(String, u64)>,
    binary_count: u64,
}

impl From<GrepOutput> for GrepOutputWire {
    fn from(output: GrepOutput) -> GrepOutputWire {
        GrepOutputWire {
            lines: output
                .lines
                .into_iter()
                .map(|line| (line.path, line.line_number, line.text, line.is_match))
                .collect(),
            match_count: output.match_count as u64,
            limit_reached: output.limit_reached,
            oversized: output.oversized,
            oversized_count: output.oversized_count as u64,
            binary: output
                .binary
                .into_iter()
                .map(|file| (file.path, file.offset))
                .collect(),
            binary_count: output.binary_count as u64,
        }
    }
}

impl From<GrepOutputWire> for GrepOutput {
    fn from(wire: GrepOutputWire) -> GrepOutput {
        GrepOutput {
            lines: wire
                .lines
                .into_iter()
                .map(|(path, line_number, text, is_match)| GrepLine {
                    path,
                    line_number,
                    text,
                    is_match,
                })
                .collect(),
            match_count: usize::try_from(wire.match_count).unwrap_or(usize::MAX),
            limit_reached: wire.limit_reached,
            oversized: wire.oversized,
            oversized_count: usize::try_from(wire.oversized_count).unwrap_or(usize::MAX),
            binary: wire
                .binary
                .into_iter()
                .map(|(path, offset)| crate::BinaryFile { path, offset })
                .collect(),
            binary_count: usize::try_from(wire.binary_count).unwrap_or(usize::MAX),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct FindWire {
    pattern: String,
    root: WPath,
    limit: u64,
}

impl From<&FindRequest> for FindWire {
    fn from(request: &FindRequest) -> FindWire {
        FindWire {
            pattern: request.pattern.clone(),
            root: wpath(&request.root),
            limit: request.limit as u64,
        }
    }
}

impl From<FindWire> for FindRequest {
    fn from(wire: FindWire) -> FindRequest {
        FindRequest {
            pattern: wire.pattern,
            root: path(wire.root),
            limit: usize::try_from(wire.limit).unwrap_or(usize::MAX),
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct FindOutputWire {
    entries: Vec<(String, bool)>,
    limit_reached: bool,
}

impl From<FindOutput> for FindOutputWire {
    fn from(output: FindOutput) -> FindOutputWire {
        FindOutputWire {
            entries: output
                .entries
                .into_iter()
                .map(|entry| (entry.path, entry.is_dir))
                .collect(),
            limit_reached: output.limit_reached,
        }
    }
}

impl From<FindOutputWire> for FindOutput {
    fn from(wire: FindOutputWire) -> FindOutput {
        FindOutput {
            entries: wire
                .entries
                .into_iter()
                .map(|(path, is_dir)| FindEntry { path, is_dir })
                .collect(),
            limit_reached: wire.limit_reached,
        }
    }
}
