// trace_engine_flows.mjs: load a Chrome trace-event JSON file into Chrome DevTools'
// own trace engine (npm @paulirish/trace_engine) and print what it drew, as one JSON
// line: {"flows": N, "startTime": "..."} (flows: the arrows with both ends bound to a
// slice; startTime: the trace's wall-clock anchor as the engine read it).
// Test tooling, not product (docs/testing.md):
//   node tests/tools/trace_engine_flows.mjs ENGINE_DIR trace.json
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [engineDir, file] = process.argv.slice(2);
if (!engineDir || !file) {
	console.error('usage: trace_engine_flows.mjs ENGINE_DIR TRACE.json');
	process.exit(2);
}
// the engine runs in a browser: in node it needs DOMRect (its README says so)
globalThis.DOMRect ??= class DOMRect {
	constructor(x = 0, y = 0, width = 0, height = 0) {
		Object.assign(this, { x, y, width, height });
	}
};
const Trace = await import(pathToFileURL(path.join(engineDir, 'models/trace/trace.js')).href);
const json = JSON.parse(fs.readFileSync(file, 'utf8'));
const model = Trace.TraceModel.Model.createWithAllHandlers();
await model.parse(json.traceEvents, { metadata: json.metadata ?? {} });
const parsed = model.parsedTrace(0);
console.log(JSON.stringify({
	flows: parsed.data.Flows.flows.length,
	startTime: parsed.metadata?.startTime ?? null,
}));
