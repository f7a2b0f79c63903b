// `node --import ./test/kit/load-trace.mjs ...`: appends the URL or request of every module the
// process loads (ES imports and CommonJS requires alike) to the file SOB_LOAD_TRACE names.
import { appendFileSync } from 'node:fs';
import Module, { register } from 'node:module';

const file = process.env.SOB_LOAD_TRACE;
if (file) {
  const originalLoad = Module._load;
  Module._load = function load(request, parent, isMain) {
    appendFileSync(file, `require ${request}\n`);
    return originalLoad.call(this, request, parent, isMain);
  };
  const hooks = `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  appendFileSync(${JSON.stringify(file)}, 'import ' + r.url + '\\n');
  return r;
}`;
  register(`data:text/javascript,${encodeURIComponent(hooks)}`);
}
