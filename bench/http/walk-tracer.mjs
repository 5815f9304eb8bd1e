// The tracer thread of bench/http/walk.ts: attached to the main thread's inspector (`connectToMainThread`), it puts a
// breakpoint at the first statement of every library function the main thread names, and on each pause notes the
// function's file and whether its caller was in another file (an entry into the file) before resuming. A worker,
// because a session on the paused thread itself could not answer its own pauses.
import { Session } from 'node:inspector';
import { parentPort } from 'node:worker_threads';

const session = new Session();
session.connectToMainThread();
const post = (method, params) =>
  new Promise((resolve, reject) =>
    session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))),
  );
const scriptIds = new Map();
const urls = new Map();
session.on('Debugger.scriptParsed', ({ params }) => {
  scriptIds.set(params.url, params.scriptId);
  urls.set(params.scriptId, params.url);
});
// A frame's own `url` is deprecated (and empty in Node 20's V8): the script's id names it.
const urlOf = (frame) => urls.get(frame.location.scriptId);
const calls = new Map();
const entries = new Map();
let tracing = false;
session.on('Debugger.paused', ({ params }) => {
  const [top, caller] = params.callFrames;
  if (tracing && top !== undefined) {
    const file = urlOf(top);
    calls.set(file, (calls.get(file) ?? 0) + 1);
    // No caller frame: called from the event loop or a promise job; another file's frame: entered from there.
    if (caller === undefined || urlOf(caller) !== file) entries.set(file, (entries.get(file) ?? 0) + 1);
  }
  session.post('Debugger.resume');
});

/** A V8 offset (UTF-16 units) as line and column. */
function position(source, offset) {
  let line = 0;
  let lineStart = 0;
  for (
    let index = source.indexOf('\n');
    index !== -1 && index < offset;
    index = source.indexOf('\n', index + 1)
  ) {
    line++;
    lineStart = index + 1;
  }
  return { lineNumber: line, columnNumber: offset - lineStart };
}

parentPort.on('message', async (message) => {
  if (message.kind === 'arm') {
    await post('Debugger.enable');
    let set = 0;
    for (const [url, functions] of message.functions) {
      const scriptId = scriptIds.get(url);
      if (scriptId === undefined) continue;
      const { scriptSource } = await post('Debugger.getScriptSource', { scriptId });
      for (const { start, end } of functions) {
        const { locations } = await post('Debugger.getPossibleBreakpoints', {
          start: { scriptId, ...position(scriptSource, start) },
          end: { scriptId, ...position(scriptSource, end) },
        });
        if (locations.length === 0) continue;
        // The function's first statement: a nested function's own statements come after the one that makes it.
        const { scriptId: id, lineNumber, columnNumber } = locations[0];
        try {
          await post('Debugger.setBreakpoint', { location: { scriptId: id, lineNumber, columnNumber } });
          set++;
        } catch {
          // Two functions that start at one location (rare): one breakpoint serves.
        }
      }
    }
    tracing = true;
    parentPort.postMessage({ kind: 'armed', breakpoints: set });
  } else if (message.kind === 'disarm') {
    tracing = false;
    await post('Debugger.disable');
    parentPort.postMessage({ kind: 'traced', calls: [...calls], entries: [...entries] });
    session.disconnect();
  }
});
