import net from 'node:net';

interface Link {
  client: net.Socket;
  upstream: net.Socket;
  /** Replies are held back instead of forwarded: Redis seems frozen to this connection. */
  frozen: boolean;
  freezeAfterReply: boolean;
  held: Buffer[];
}

/**
 * A TCP proxy in front of Redis for one process, which can freeze single connections at a
 * chosen command: from the moment the client sends data containing a pattern, or right after
 * the reply to it. That lands a fault exactly between two Redis commands of one request.
 */
export class RedisProxy {
  private server: net.Server | null = null;
  private readonly links = new Set<Link>();
  private rules: { pattern: string; when: 'now' | 'afterReply' }[] = [];
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    if (this.server) return;
    const server = net.createServer((client) => this.link(client));
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  /** Freezes each connection that sends `pattern` from then on: at once, or after its reply. */
  freezeOn(pattern: string, when: 'now' | 'afterReply'): void {
    this.rules.push({ pattern, when });
  }

  /** Forgets the rules and delivers every held reply. */
  thaw(): void {
    this.rules = [];
    for (const link of this.links) {
      link.frozen = false;
      link.freezeAfterReply = false;
      for (const chunk of link.held.splice(0)) link.client.write(chunk);
    }
  }

  /** Drops every connection and refuses new ones, as if Redis had gone away. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const link of this.links) {
      link.client.destroy();
      link.upstream.destroy();
    }
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  async close(): Promise<void> {
    this.thaw();
    await this.cut();
  }

  private link(client: net.Socket): void {
    const upstream = net.connect(this.target.port, this.target.host);
    const link: Link = { client, upstream, frozen: false, freezeAfterReply: false, held: [] };
    this.links.add(link);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      this.links.delete(link);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.on('data', (chunk: Buffer) => {
      const text = chunk.toString('latin1');
      for (const rule of this.rules) {
        if (!text.includes(rule.pattern)) continue;
        if (rule.when === 'now') link.frozen = true;
        else link.freezeAfterReply = true;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (link.frozen) {
        link.held.push(chunk);
        return;
      }
      client.write(chunk);
      if (link.freezeAfterReply) {
        link.freezeAfterReply = false;
        link.frozen = true;
      }
    });
  }
}
