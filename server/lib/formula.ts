// A small, safe arithmetic language for scoring formulas: numbers, names, + - * /, unary minus,
// parentheses and the functions min, max (two or more arguments) and log (natural, one argument).
// A formula is parsed once into a tree and evaluated by walking it: no eval, no Function, no code.

export type Node =
  | { kind: 'number'; value: number }
  | { kind: 'name'; name: string }
  | { kind: 'negate'; operand: Node }
  | { kind: 'binary'; op: '+' | '-' | '*' | '/'; left: Node; right: Node }
  | { kind: 'call'; fn: 'min' | 'max' | 'log'; args: Node[] }

export class FormulaError extends Error {
  constructor(message: string, readonly position: number) { super(message) }
}

const MAX_LENGTH = 500
const MAX_DEPTH = 32
const TOKEN = /\s*(?:(\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)|([a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)?)|([-+*/(),]))/y

type Token = { type: 'number' | 'name' | 'punct'; text: string; at: number }

function tokenize(text: string): Token[] {
  const tokens: Token[] = []
  TOKEN.lastIndex = 0
  let at = 0
  while (at < text.length) {
    if (/^\s*$/.test(text.slice(at))) break
    TOKEN.lastIndex = at
    const match = TOKEN.exec(text)
    if (!match) throw new FormulaError(`Unexpected character "${text.slice(at).trim()[0]}"`, at)
    const start = at + match[0].length - (match[1] ?? match[2] ?? match[3])!.length
    tokens.push(match[1] ? { type: 'number', text: match[1], at: start } : match[2] ? { type: 'name', text: match[2], at: start } : { type: 'punct', text: match[3]!, at: start })
    at = TOKEN.lastIndex
  }
  return tokens
}

/** Parses `text`; every name must be in `names` (factors and `demand.*`). Throws FormulaError. */
export function parseFormula(text: string, names: ReadonlySet<string>): Node {
  if (text.length > MAX_LENGTH) throw new FormulaError(`A formula has at most ${MAX_LENGTH} characters`, MAX_LENGTH)
  const tokens = tokenize(text)
  let i = 0
  const peek = () => tokens[i]
  const expect = (punct: string) => {
    const token = tokens[i]
    if (token?.text !== punct) throw new FormulaError(`Expected "${punct}"`, token?.at ?? text.length)
    i++
  }
  const sum = (depth: number): Node => {
    let node = product(depth)
    while (peek()?.text === '+' || peek()?.text === '-') node = { kind: 'binary', op: tokens[i++]!.text as '+' | '-', left: node, right: product(depth) }
    return node
  }
  const product = (depth: number): Node => {
    let node = unary(depth)
    while (peek()?.text === '*' || peek()?.text === '/') node = { kind: 'binary', op: tokens[i++]!.text as '*' | '/', left: node, right: unary(depth) }
    return node
  }
  const unary = (depth: number): Node => {
    if (depth > MAX_DEPTH) throw new FormulaError('The formula nests too deeply', peek()?.at ?? text.length)
    if (peek()?.text === '-') { i++; return { kind: 'negate', operand: unary(depth + 1) } }
    return atom(depth)
  }
  const atom = (depth: number): Node => {
    const token = tokens[i++]
    if (!token) throw new FormulaError('The formula ends too early', text.length)
    if (token.type === 'number') return { kind: 'number', value: Number(token.text) }
    if (token.text === '(') { const node = sum(depth + 1); expect(')'); return node }
    if (token.type === 'name') {
      if (peek()?.text === '(') {
        if (token.text !== 'min' && token.text !== 'max' && token.text !== 'log') throw new FormulaError(`Unknown function "${token.text}" (min, max and log exist)`, token.at)
        i++
        const args = [sum(depth + 1)]
        while (peek()?.text === ',') { i++; args.push(sum(depth + 1)) }
        expect(')')
        if (token.text === 'log' ? args.length !== 1 : args.length < 2) throw new FormulaError(`${token.text} takes ${token.text === 'log' ? 'one argument' : 'two or more arguments'}`, token.at)
        return { kind: 'call', fn: token.text, args }
      }
      if (!names.has(token.text)) throw new FormulaError(`Unknown name "${token.text}"`, token.at)
      return { kind: 'name', name: token.text }
    }
    throw new FormulaError(`Unexpected "${token.text}"`, token.at)
  }
  const node = sum(0)
  if (i < tokens.length) throw new FormulaError(`Unexpected "${tokens[i]!.text}"`, tokens[i]!.at)
  checkConstantDivisors(node)
  return node
}

/** The value of a subtree without names, or undefined. */
function constant(node: Node): number | undefined {
  try { return evaluate(node, () => { throw new Error('name') }) } catch { return undefined }
}

/** A divisor that is zero whatever the factors (`x / 0`, `x / (2 - 2)`) is the formula's mistake, refused at save time. */
function checkConstantDivisors(node: Node) {
  if (node.kind === 'binary') {
    if (node.op === '/' && constant(node.right) === 0) throw new FormulaError('Division by zero', 0)
    checkConstantDivisors(node.left)
    checkConstantDivisors(node.right)
  } else if (node.kind === 'negate') checkConstantDivisors(node.operand)
  else if (node.kind === 'call') node.args.forEach(checkConstantDivisors)
}

/**
 * The formula's value; `undefined` when a name has no value (an unset factor), and `null`-like
 * `undefined` too for a division by zero or a log of a non-positive number at run time: a score is
 * then absent rather than infinite.
 */
export function evaluate(node: Node, valueOf: (name: string) => number | undefined): number | undefined {
  switch (node.kind) {
    case 'number': return node.value
    case 'name': return valueOf(node.name)
    case 'negate': { const v = evaluate(node.operand, valueOf); return v === undefined ? undefined : -v }
    case 'binary': {
      const left = evaluate(node.left, valueOf)
      const right = evaluate(node.right, valueOf)
      if (left === undefined || right === undefined) return undefined
      if (node.op === '/') return right === 0 ? undefined : left / right
      return node.op === '+' ? left + right : node.op === '-' ? left - right : left * right
    }
    case 'call': {
      const args = node.args.map((arg) => evaluate(arg, valueOf))
      if (args.some((arg) => arg === undefined)) return undefined
      if (node.fn === 'log') return args[0]! > 0 ? Math.log(args[0]!) : undefined
      return node.fn === 'min' ? Math.min(...(args as number[])) : Math.max(...(args as number[]))
    }
  }
}

/** Whether the formula reads any name `test` accepts (e.g. the `demand.*` figures). */
export function readsName(node: Node, test: (name: string) => boolean): boolean {
  switch (node.kind) {
    case 'number': return false
    case 'name': return test(node.name)
    case 'negate': return readsName(node.operand, test)
    case 'binary': return readsName(node.left, test) || readsName(node.right, test)
    case 'call': return node.args.some((arg) => readsName(arg, test))
  }
}

/**
 * The formula as a SQL expression with the same meaning as `evaluate`: null where a name has no value,
 * a divisor is zero or a log's argument is not positive. Built from the parsed tree only: numbers are
 * JavaScript numbers printed back, names ([a-z0-9_.] by the grammar) go through `nameSql`, so no text
 * of the formula reaches SQL as it was typed.
 */
export function formulaSql(node: Node, nameSql: (name: string) => string): string {
  switch (node.kind) {
    case 'number': return `(${String(node.value)})::float8`
    case 'name': return nameSql(node.name)
    case 'negate': return `(-${formulaSql(node.operand, nameSql)})`
    case 'binary': {
      const [left, right] = [formulaSql(node.left, nameSql), formulaSql(node.right, nameSql)]
      return node.op === '/' ? `(${left} / nullif(${right}, 0))` : `(${left} ${node.op} ${right})`
    }
    case 'call': {
      const args = node.args.map((arg) => formulaSql(arg, nameSql))
      if (node.fn === 'log') return `(case when ${args[0]} > 0 then ln(${args[0]}) end)`
      // least/greatest skip nulls; the formula's min/max are null when any argument is.
      return `(case when ${args.map((arg) => `${arg} is not null`).join(' and ')} then ${node.fn === 'min' ? 'least' : 'greatest'}(${args.join(', ')}) end)`
    }
  }
}
