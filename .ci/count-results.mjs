// Prints "<passed> <failed>" from a vitest JSON report; a test file that failed outside any test
// (an error in a hook or at import) counts as one failure.
import { readFileSync } from 'node:fs';

const report = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const brokenFiles = report.testResults.filter(
  (file) => file.status === 'failed' && !file.assertionResults.some((test) => test.status === 'failed'),
).length;
console.log(`${report.numPassedTests} ${report.numFailedTests + brokenFiles}`);
