// Prints the slowest test files of a CI run: `node .ci/slowest-files.mjs N LABEL=REPORT.json …`, where each
// report is a vitest JSON report and LABEL names its run (a file can run on both databases).
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

const [count, ...runs] = process.argv.slice(2);
const files = [];
for (const run of runs) {
  const at = run.indexOf('=');
  const label = run.slice(0, at);
  const report = JSON.parse(readFileSync(run.slice(at + 1), 'utf8'));
  for (const file of report.testResults) {
    files.push({ seconds: (file.endTime - file.startTime) / 1000, name: relative(process.cwd(), file.name), label });
  }
}
files.sort((a, b) => b.seconds - a.seconds);
for (const { seconds, name, label } of files.slice(0, Number(count))) {
  console.log(`${seconds.toFixed(1).padStart(7)} s  ${name}  (${label})`);
}
