import net from 'node:net';
import { Transform } from 'node:stream';

/**
 * A TCP proxy in front of a real service, so a test can cut the connection (as a crash or a
 * network failure would) and restore it, without touching the shared server itself.
 */
export class TcpProxy {
  private server: net.Server | null = null;
  private readonly sockets = new Set<net.Socket>();
  port = 0;
  private answersToDrop = 0;

  constructor(
    private readonly targetPort: number,
    private readonly targetHost = '127.0.0.1',
  ) {}

  async start(): Promise<number> {
    if (this.server) return this.port;
    const server = net.createServer((client) => {
      const upstream = net.connect(this.targetPort, this.targetHost);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      // Answers pass through a gate that can cut the connection instead of passing one on.
      const gate = new Transform({
        transform: (chunk: Buffer, _encoding, done) => {
          if (this.answersToDrop === 0) return done(null, chunk);
          this.answersToDrop--;
          client.destroy();
          upstream.destroy();
          done();
        },
      });
      client.pipe(upstream).pipe(gate).pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
    return this.port;
  }

  /**
   * The next `count` answers never reach the client: the connection drops as the first bytes of
   * each come back, after the service has done the work (as a network lost on the way back).
   */
  dropAnswers(count = 1): void {
    this.answersToDrop = count;
  }

  /** Refuses new connections and drops the open ones. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
