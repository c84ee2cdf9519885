import type { Chorus } from '../client.js'

export abstract class APIResource {
  constructor(protected readonly client: Chorus) {}
}
