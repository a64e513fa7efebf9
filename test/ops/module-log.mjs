// Preloaded into a spawned service (`NODE_OPTIONS=--import=<this file>`) by test/ops/tracing.test.ts:
// every module URL the process's ESM loader resolves is appended to the file MODULE_LOG names, so
// that a test can tell which packages a process loaded (here: whether OpenTelemetry's SDK was).
import { register } from 'node:module'

if (process.env.MODULE_LOG !== undefined) register('./module-log-hooks.mjs', import.meta.url, { data: { file: process.env.MODULE_LOG } })
