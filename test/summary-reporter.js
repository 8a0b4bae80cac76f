// A jest reporter for CI: when ZD_TEST_SUMMARY_FILE is set, it (re)writes
// that file after every test file with the counts so far, and once more at
// the end with `complete: true`. .ci/run reads it, so the summary line is
// right even when a hung file makes CI cut the run short.
'use strict';
const fs = require('node:fs');

class SummaryReporter {
  constructor() {
    this.file = process.env.ZD_TEST_SUMMARY_FILE;
    this.counts = { passed: 0, failed: 0, runtimeErrorFiles: 0, files: 0, complete: false };
  }

  write() {
    if (!this.file) return;
    const tmp = `${this.file}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify(this.counts));
    fs.renameSync(tmp, this.file);
  }

  onRunStart() {
    this.write();
  }

  onTestResult(_test, result) {
    this.counts.files += 1;
    this.counts.passed += result.numPassingTests;
    this.counts.failed += result.numFailingTests;
    if (result.testExecError || (result.failureMessage && result.numFailingTests === 0)) this.counts.runtimeErrorFiles += 1;
    this.write();
  }

  onRunComplete(_contexts, results) {
    this.counts = {
      passed: results.numPassedTests,
      failed: results.numFailedTests,
      runtimeErrorFiles: results.numRuntimeErrorTestSuites,
      files: results.numTotalTestSuites,
      complete: true,
    };
    this.write();
  }

  getLastError() {
    return undefined;
  }
}

module.exports = SummaryReporter;
