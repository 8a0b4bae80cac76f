/**
 * The Node.js flags a node process runs with: the Dockerfile (as NODE_OPTIONS),
 * `npm start`, `zdmatch bench --local` and the tests' node processes all pass
 * these, and a unit test holds the first two to this list.
 *
 * `--max-semi-space-size=64`: V8's young generation may grow to 64 MB a
 * semi-space instead of 16. A node's garbage is short-lived (frames, script
 * calls, replies), but with the default it scavenged every ≈ 80 ms at 5k
 * Steps/s and promoted what was still in flight, so its old generation filled
 * and a major GC ran every second: the pauses made most of the p99. With it,
 * at 5k/s: one major GC in 4 s instead of four or five, the node's GC time
 * about half, its CPU per Step −10 %, the p99 about half; at full load and at
 * 1k/s, no change beyond noise (docs/benchmarks.md). It may take up to 3 × 64
 * MB of young generation instead of 3 × 16, and only under load.
 */
export const NODE_RUNTIME_FLAGS: readonly string[] = ['--max-semi-space-size=64'];
