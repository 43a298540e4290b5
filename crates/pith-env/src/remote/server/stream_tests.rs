//! Streamed writes on the far side, driven frame by frame over an in-memory
//! pipe (the connection's other end written by hand), on real files.

use std::path::Path;
use std::sync::Arc;

use tokio::io::{AsyncWriteExt, DuplexStream, ReadHalf, WriteHalf};

use super::serve;
use crate::remote::wire::{
    self, Call, ClientHello, PROTOCOL_VERSION, RemotePolicyWire, Reply, ToClient, ToServer,
    data_head, wpath,
};
use crate::{FsError, FsErrorKind, LocalEnv};

struct Near {
    reader: ReadHalf<DuplexStream>,
    writer: WriteHalf<DuplexStream>,
    server: tokio::task::JoinHandle<std::io::Result<()>>,
}

/// A far side serving one connection, greeted.
async fn connect() -> Near {
    let (near, far) = tokio::io::duplex(1 << 20);
    let (far_reader, far_writer) = tokio::io::split(far);
    let server = tokio::spawn(serve(far_reader, far_writer, Arc::new(LocalEnv::new())));
    let (mut reader, mut writer) = tokio::io::split(near);
    let hello = ToServer::Hello(ClientHello {
        protocol: PROTOCOL_VERSION,
        pith_version: env!("CARGO_PKG_VERSION").to_owned(),
        policy: RemotePolicyWire::default(),
    });
    wire::write_frame(&mut writer, &hello).await.unwrap();
    writer.flush().await.unwrap();
    let answer: Option<ToClient> = wire::read_frame(&mut reader).await.unwrap();
    assert!(matches!(answer, Some(ToClient::Hello(ref h)) if h.refused.is_none()));
    Near {
        reader,
        writer,
        server,
    }
}

impl Near {
    async fn send(&mut self, message: &ToServer) {
        wire::write_frame(&mut self.writer, message).await.unwrap();
        self.writer.flush().await.unwrap();
    }

    async fn write_call(&mut self, id: u64, path: &Path, len: u64) {
        let call = Call::WriteAtomic {
            path: wpath(path),
            len,
        };
        self.send(&ToServer::Call { id, call }).await;
    }

    /// A `Data` frame announcing `announced` bytes, of which `bytes` are sent.
    async fn data(&mut self, id: u64, announced: usize, bytes: &[u8]) {
        let head = data_head(id, announced).unwrap();
        self.writer.write_all(&head).await.unwrap();
        self.writer.write_all(bytes).await.unwrap();
        self.writer.flush().await.unwrap();
    }

    /// The reply to `id` (other messages skipped).
    async fn reply(&mut self, id: u64) -> Reply {
        loop {
            match wire::read_frame::<_, ToClient>(&mut self.reader)
                .await
                .unwrap()
            {
                Some(ToClient::Reply { id: got, reply }) if got == id => return reply,
                Some(_) => {}
                None => panic!("the connection ended before the reply to {id}"),
            }
        }
    }
}

fn fs_error(reply: Reply) -> FsError {
    match reply {
        Reply::FsError(error) => error.into(),
        other => panic!("expected an error, got {other:?}"),
    }
}

/// The names in `dir`.
fn names(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_cut_mid_frame_leaves_the_old_bytes_and_no_temp_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.bin");
    std::fs::write(&path, "old").unwrap();
    let mut near = connect().await;
    near.write_call(1, &path, 12 << 20).await;
    // A whole first frame (written to the temp file as it arrives), then
    // 3 MiB of a 4 MiB frame, and the connection is gone.
    near.data(1, 4 << 20, &vec![b'n'; 4 << 20]).await;
    near.data(1, 4 << 20, &vec![b'n'; 3 << 20]).await;
    drop(near.writer);
    drop(near.reader);
    let ended = near.server.await.unwrap();
    assert!(ended.is_err(), "a frame cut short is an error");
    assert_eq!(std::fs::read(&path).unwrap(), b"old");
    assert_eq!(names(dir.path()), ["f.bin"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_cancelled_between_frames_changes_nothing_and_the_connection_serves_on() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.bin");
    std::fs::write(&path, "old").unwrap();
    let mut near = connect().await;
    near.write_call(1, &path, 12 << 20).await;
    near.data(1, 4 << 20, &vec![b'n'; 4 << 20]).await;
    near.send(&ToServer::Cancel { id: 1 }).await;
    let error = fs_error(near.reply(1).await);
    assert_eq!(error.kind, FsErrorKind::Cancelled, "{error}");
    assert_eq!(std::fs::read(&path).unwrap(), b"old");
    assert_eq!(names(dir.path()), ["f.bin"]);
    // The next write on the same connection lands.
    near.write_call(2, &path, 3).await;
    near.data(2, 3, b"new").await;
    assert!(matches!(near.reply(2).await, Reply::Unit));
    assert_eq!(std::fs::read(&path).unwrap(), b"new");
    assert_eq!(names(dir.path()), ["f.bin"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn data_past_the_announced_size_fails_the_write_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.bin");
    std::fs::write(&path, "old").unwrap();
    let mut near = connect().await;
    near.write_call(1, &path, 2 << 20).await;
    near.data(1, 3 << 20, &vec![b'n'; 3 << 20]).await;
    let error = fs_error(near.reply(1).await);
    assert_eq!(error.kind, FsErrorKind::InvalidInput, "{error}");
    assert!(error.to_string().contains("ran past"), "{error}");
    assert_eq!(std::fs::read(&path).unwrap(), b"old");
    assert_eq!(names(dir.path()), ["f.bin"]);
    // The connection still serves: the frame was read whole.
    near.send(&ToServer::Call {
        id: 2,
        call: Call::Read { path: wpath(&path) },
    })
    .await;
    assert!(matches!(near.reply(2).await, Reply::Bytes(bytes) if bytes == b"old"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_into_a_missing_directory_fails_at_once_and_its_data_is_read_past() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing/f.bin");
    let mut near = connect().await;
    near.write_call(1, &path, 20 << 20).await;
    for _ in 0..5 {
        near.data(1, 4 << 20, &vec![b'n'; 4 << 20]).await;
    }
    let error = fs_error(near.reply(1).await);
    assert_eq!(error.kind, FsErrorKind::NotFound, "{error}");
    near.send(&ToServer::Call {
        id: 2,
        call: Call::Metadata {
            path: wpath(dir.path()),
        },
    })
    .await;
    assert!(matches!(near.reply(2).await, Reply::Metadata(_)));
    assert!(names(dir.path()).is_empty());
}
