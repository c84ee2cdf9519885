// A real DNS server (the `dns2` package) on a random loopback UDP port, answering from maps the test edits.
import { createServer, Packet } from 'dns2'

export interface DnsRecords {
  A: Map<string, string[]>
  AAAA: Map<string, string[]>
  TXT: Map<string, string[]>
  CNAME: Map<string, string>
}

export async function startDnsServer() {
  const records: DnsRecords = { A: new Map(), AAAA: new Map(), TXT: new Map(), CNAME: new Map() }
  const queries: string[] = []
  const server = createServer({
    udp: true,
    handle(request, send) {
      const response = Packet.createResponseFromRequest(request)
      for (const question of request.questions) {
        const name = question.name.toLowerCase()
        const answer = (record: { address?: string; data?: string[]; domain?: string }) =>
          response.answers.push(Packet.createResourceFromQuestion(question, { ttl: 1, ...record }))
        queries.push(`${Packet.TYPE_NAME[question.type]} ${name}`)
        if (question.type === Packet.TYPE.A) for (const address of records.A.get(name) ?? []) answer({ address })
        if (question.type === Packet.TYPE.AAAA) for (const address of records.AAAA.get(name) ?? []) answer({ address })
        if (question.type === Packet.TYPE.TXT) for (const text of records.TXT.get(name) ?? []) answer({ data: text.match(/.{1,255}/g) ?? [''] }) // 255-byte strings, as DNS needs
        const cname = records.CNAME.get(name)
        if (question.type === Packet.TYPE.CNAME && cname) answer({ domain: cname })
      }
      void send(response)
    },
  })
  const addresses = await server.listen({ udp: { port: 0, address: '127.0.0.1' } })
  return {
    /** The DNS_RESOLVER value that points at this server. */
    address: `127.0.0.1:${addresses.udp!.port}`,
    records,
    queries,
    close: () => server.close(),
  }
}
