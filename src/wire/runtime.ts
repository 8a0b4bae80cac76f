/**
 * protobufjs runtime settings, applied before the generated module loads:
 * 64-bit fields decode to JS numbers (all ours are milliseconds or counters,
 * well below 2^53) instead of Long objects.
 */
import $protobuf from 'protobufjs/minimal';

$protobuf.util.Long = undefined as unknown as typeof $protobuf.util.Long;
$protobuf.configure();
