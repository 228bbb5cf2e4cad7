// Compile Python sources to bytecode with the page's own interpreter (Pyodide's CPython, run here
// in Node), so the engine bundle carries .pyc files the browser imports without compiling: the
// build's CPython is another version, whose bytecode Pyodide cannot read.
//
//   node scripts/compile-bytecode.mjs <pyodide folder> <folder of sources>
//
// Writes __pycache__/<module>.<cache tag>.pyc beside every .py under the folder, as unchecked-hash
// pycs (no timestamps, so the same sources give the same bytes; the bundle is content-addressed
// and never changes under a pyc). Prints the cache tag. Called by build.py (compile_bytecode).

import { resolve } from "node:path";

const [pyodideDir, sourceDir] = process.argv.slice(2).map((p) => resolve(p));
const { loadPyodide } = await import(`${pyodideDir}/pyodide.mjs`);
const pyodide = await loadPyodide({ indexURL: `${pyodideDir}/`, packages: [] });
pyodide.FS.mkdirTree("/src");
pyodide.mountNodeFS("/src", sourceDir);
const tag = pyodide.runPython(`
import pathlib, py_compile, sys
for path in sorted(pathlib.Path("/src").rglob("*.py")):
    py_compile.compile(str(path), doraise=True, invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
sys.implementation.cache_tag
`);
console.log(tag);
