// Ends .ci/run: names every failed test of every pass, with the start of its failure, then prints
// the one line "N passed, N failed" summed over all passes. Only the tail of CI's output is kept,
// so a failure deep in an early pass's output must be repeated here to be seen at all.
// Arguments: label=path pairs, one per pass, each path a Jest --json output file.
import fs from 'node:fs';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';

const MESSAGE_LINES = 12;

function firstLines(text) {
  const lines = stripVTControlCharacters(text)
    .split('\n')
    .filter((line) => line.trim() !== '');
  const shown = lines.slice(0, MESSAGE_LINES).map((line) => `      ${line}`);
  if (lines.length > MESSAGE_LINES)
    shown.push(`      ... (${lines.length - MESSAGE_LINES} more lines)`);
  return shown.join('\n');
}

let passed = 0;
let failed = 0;
const failures = [];
for (const argument of process.argv.slice(2)) {
  const split = argument.indexOf('=');
  const label = argument.slice(0, split);
  const file = argument.slice(split + 1);
  let results;
  try {
    results = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    // A pass that never got to write its results (Jest crashed, or never started) is a failure
    // too, so that the closing count does not read as a pass.
    failures.push(`[${label}] no results: the pass wrote no readable ${path.basename(file)}`);
    failed += 1;
    continue;
  }
  passed += results.numPassedTests ?? 0;
  failed += (results.numFailedTests ?? 0) + (results.numRuntimeErrorTestSuites ?? 0);
  for (const suite of results.testResults ?? []) {
    const suiteName = path.relative(process.cwd(), suite.name);
    const failedTests = (suite.assertionResults ?? []).filter((test) => test.status === 'failed');
    for (const test of failedTests) {
      failures.push(
        `[${label}] ${suiteName} › ${test.fullName}\n${firstLines(test.failureMessages.join('\n'))}`,
      );
    }
    if (failedTests.length === 0 && suite.status === 'failed') {
      failures.push(
        `[${label}] ${suiteName} (the file itself failed)\n${firstLines(suite.message ?? '')}`,
      );
    }
  }
}

if (failures.length > 0) {
  console.log(`== failed, ${failures.length} in all`);
  for (const failure of failures) console.log(`  ${failure}`);
}
console.log(`${passed} passed, ${failed} failed`);
