// pi-runner.mjs — Pi's seven coding tools in one long-lived Node process, for bench/run.
//
// Protocol: one JSON object per line on stdin, `{"id", "tool", "args", "cwd"}`; one JSON
// object per line on stdout, `{"id", "isError", "content", "details", "ms"}`, in input order.
// Each call starts as soon as its line is read, so pipelined requests run concurrently, as
// Pi's agent runs the tool calls of one message (and as `pith batch` does); bench/run sends
// the next request only after the previous answer except in the batch scenario.
//
// Each call goes through the same steps as Pi's agent loop: `prepareArguments` (edit's repair
// of legacy arguments), `validateToolArguments` (TypeBox coercion and validation, including
// its structuredClone of the arguments), then `execute`; a thrown error becomes
// `{isError: true, content: [{type: "text", text: message}], details: {}}`; a result with
// `isError: true` is an error too.
// `ms` is the time of those three steps alone (no JSON parsing or printing).
//
// Special requests: `{"id", "tool": "__ping"}` answers at once (used to time Node's start-up
// to first answer); `{"id", "tool": "__gc"}` runs the garbage collector (when Node was started
// with --expose-gc) and answers; `{"id", "tool": "__exit"}` ends the process.

//
// Which Pi: `PI_RUNNER_PEER=pi16` loads Pi 1.6.0 (`@earendil-works/*`, installed in
// `pi16/node_modules`, run with the Node 22 installed there); anything else loads Pi 0.73.1
// (`@mariozechner/*` in `node_modules`). Both expose the same factories and validator.

import { createInterface } from "node:readline";
import { performance } from "node:perf_hooks";

const pi16 = process.env.PI_RUNNER_PEER === "pi16";
const agent = pi16
	? await import(new URL("./pi16/node_modules/@earendil-works/pi-coding-agent/dist/index.js", import.meta.url))
	: await import("@mariozechner/pi-coding-agent");
const ai = pi16
	? await import(new URL("./pi16/node_modules/@earendil-works/pi-ai/dist/index.js", import.meta.url))
	: await import("@mariozechner/pi-ai");
const {
	createBashTool,
	createEditTool,
	createFindTool,
	createGrepTool,
	createLsTool,
	createReadTool,
	createWriteTool,
} = agent;
const { validateToolArguments } = ai;

const factories = {
	read: createReadTool,
	write: createWriteTool,
	edit: createEditTool,
	bash: createBashTool,
	grep: createGrepTool,
	find: createFindTool,
	ls: createLsTool,
};

/** Tools are made once per (tool, cwd), as an agent session would. */
const tools = new Map();

function toolFor(name, cwd) {
	const key = `${name}\0${cwd}`;
	let tool = tools.get(key);
	if (!tool) {
		const factory = factories[name];
		if (!factory) return undefined;
		tool = factory(cwd);
		tools.set(key, tool);
	}
	return tool;
}

async function call(request) {
	const cwd = request.cwd ?? process.cwd();
	const tool = toolFor(request.tool, cwd);
	if (!tool) {
		return { isError: true, content: [{ type: "text", text: `Tool ${request.tool} not found` }], details: {} };
	}
	try {
		let args = request.args ?? {};
		if (tool.prepareArguments) args = tool.prepareArguments(args);
		const validated = validateToolArguments(tool, { type: "toolCall", id: String(request.id), name: tool.name, arguments: args });
		const result = await tool.execute(String(request.id), validated, undefined, undefined);
		// Pi 1.6 returns some errors as results (`isError: true`, e.g. a non-zero exit) rather
		// than throwing them, as 0.73.1 did.
		return { isError: result.isError === true, content: result.content, details: result.details ?? null };
	} catch (error) {
		const text = error instanceof Error ? error.message : String(error);
		return { isError: true, content: [{ type: "text", text }], details: {} };
	}
}

function write(line) {
	return new Promise((resolve) => {
		if (process.stdout.write(`${line}\n`)) resolve();
		else process.stdout.once("drain", resolve);
	});
}

/** Answers in input order; each call starts as soon as its line is read. */
let tail = Promise.resolve();
function answerInOrder(promise) {
	tail = tail.then(() => promise).then(write);
}

async function handle(request) {
	if (request.tool === "__gc") {
		// Between measured calls (untimed): collect garbage so that the next call's peak RSS
		// is its own, not the previous scenario's leftovers. Needs node --expose-gc.
		if (globalThis.gc) globalThis.gc();
		return JSON.stringify({ id: request.id, isError: false, content: [], details: null, ms: 0 });
	}
	if (request.tool === "__ping") {
		return JSON.stringify({ id: request.id, isError: false, content: [], details: null, ms: 0 });
	}
	const start = performance.now();
	const result = await call(request);
	const ms = performance.now() - start;
	return JSON.stringify({ id: request.id, ...result, ms });
}

const input = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of input) {
	if (!line.trim()) continue;
	let request;
	try {
		request = JSON.parse(line);
	} catch (error) {
		answerInOrder(Promise.resolve(JSON.stringify({ id: null, isError: true, content: [{ type: "text", text: `bad request: ${error.message}` }], details: {}, ms: 0 })));
		continue;
	}
	if (request.tool === "__exit") break;
	answerInOrder(handle(request));
}
await tail;
process.exit(0);
