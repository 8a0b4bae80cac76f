/** cluster-key-slot (ioredis's own slot function) ships no types. */
declare module 'cluster-key-slot' {
  /** The Redis Cluster hash slot of a key (CRC16 of its hash tag, mod 16384). */
  function calculateSlot(key: string | Buffer): number;
  export = calculateSlot;
}
