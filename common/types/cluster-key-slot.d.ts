declare module 'cluster-key-slot' {
  /** The Redis Cluster slot (0-16383) of a key, honouring its hash tag. */
  export default function calculateSlot(key: string | Buffer): number;
}
