// What the JSON formats (Fider's backup, Canny's API objects) share: one JSON object of named arrays,
// streamed member by member (server/lib/text-stream.ts); each pass maps the sections it needs.
import { FormatError, jsonSections, textChunks } from '../../lib/text-stream.ts'
import { rowError, type ImportRecord, type OpenPart, type RecordKind, type Source } from './records.ts'

export type Item = Record<string, any>
type Mapper = (item: Item, line: number) => ImportRecord | ImportRecord[] | null

/**
 * A source over one JSON file: `sections[pass]` names, per member of the top-level object, how its
 * elements become records of that pass. `required` must be present or the file is not this format (422).
 */
export function jsonSource(format: string, required: string, sections: Partial<Record<RecordKind, Record<string, Mapper>>>): Source {
  const passes = (Object.keys(sections) as RecordKind[])
  return {
    passes,
    async *read(pass, open: OpenPart) {
      const mappers = sections[pass] ?? {}
      const stream = await open('file')
      if (!stream) return
      for await (const { section, line, value } of jsonSections(textChunks(stream))) {
        const map = mappers[section]
        if (!map) continue
        if (!value || typeof value !== 'object' || Array.isArray(value)) {
          yield { file: 'file', ...rowError(line, `an element of "${section}" is not an object`) }
          continue
        }
        const mapped = map(value as Item, line)
        for (const record of mapped === null ? [] : Array.isArray(mapped) ? mapped : [mapped]) yield { file: 'file', ...record }
      }
    },
    async check(open) {
      const stream = await open('file')
      if (!stream) throw new FormatError(1, 'no file')
      const counts: Record<string, number> = {}
      const known = new Set(Object.values(sections).flatMap((mappers) => Object.keys(mappers!)))
      for await (const { section, line, value } of jsonSections(textChunks(stream))) {
        if (!known.has(section)) continue
        if (!value || typeof value !== 'object' || Array.isArray(value)) throw new FormatError(line, `an element of "${section}" is not an object, so this is not a ${format} file`)
        counts[section] = (counts[section] ?? 0) + 1
      }
      if (!(required in counts)) throw new FormatError(1, `no "${required}" array: this is not a ${format} file`)
      return counts
    },
  }
}
