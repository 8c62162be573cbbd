/**
 * The part of CEL that webhook matchConditions are written in, evaluated as the API server does:
 * `object`, `oldObject` and `request` as variables; literals; `.field` and `[index]`; `has()`;
 * `!`, `==`, `!=`, `<`, `<=`, `>`, `>=`, `in`, `&&`, `||`, `? :`; `size()`, `startsWith`,
 * `endsWith`, `contains`; the `exists`, `all` and `exists_one` macros. Selecting an absent field is
 * an error, and `&&`/`||` absorb errors the way CEL's commutative logic does (`true || error` is
 * true), so a condition errs exactly where the API server's would.
 *
 * An expression outside this subset does not parse: the caller reports it instead of guessing.
 */

export type CelValue = null | boolean | number | string | CelValue[] | { [key: string]: CelValue };

/** An evaluation error: a value, as in CEL, until the whole expression yields it. */
export class CelError {
  constructor(readonly message: string) {}
}

type Result = CelValue | CelError;

type Node =
  | { type: 'literal'; value: CelValue }
  | { type: 'ident'; name: string }
  | { type: 'select'; target: Node; field: string }
  | { type: 'index'; target: Node; index: Node }
  | { type: 'list'; items: Node[] }
  | { type: 'call'; name: string; target?: Node; args: Node[] }
  | { type: 'has'; target: Node; field: string }
  | { type: 'macro'; name: 'exists' | 'all' | 'exists_one'; target: Node; variable: string; body: Node }
  | { type: 'unary'; op: '!' | '-'; operand: Node }
  | { type: 'binary'; op: string; left: Node; right: Node }
  | { type: 'ternary'; condition: Node; then: Node; otherwise: Node };

export class CelSyntaxError extends Error {
  override name = 'CelSyntaxError';
}

const TOKEN =
  /\s*(?:(\d+(?:\.\d+)?)|('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")|([A-Za-z_][A-Za-z0-9_]*)|(\|\||&&|==|!=|<=|>=|[<>!?:.,()[\]-]))/y;

type Token = { kind: 'number' | 'string' | 'ident' | 'op'; text: string };

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < source.length) {
    if (/^\s*$/.test(source.slice(TOKEN.lastIndex))) break;
    const at = TOKEN.lastIndex;
    const match = TOKEN.exec(source);
    if (!match) throw new CelSyntaxError(`unexpected character at ${at}: ${source.slice(at, at + 10)}`);
    const [, number, string, ident, op] = match;
    if (number !== undefined) tokens.push({ kind: 'number', text: number });
    else if (string !== undefined) tokens.push({ kind: 'string', text: string });
    else if (ident !== undefined) tokens.push({ kind: 'ident', text: ident });
    else if (op !== undefined) tokens.push({ kind: 'op', text: op });
  }
  return tokens;
}

function unquote(text: string): string {
  const body = text.slice(1, -1);
  return body.replace(/\\(.)/g, (_, char: string) => ({ n: '\n', t: '\t', r: '\r' })[char] ?? char);
}

class Parser {
  private at = 0;
  constructor(private readonly tokens: Token[]) {}

  parse(): Node {
    const node = this.ternary();
    if (this.at < this.tokens.length) throw new CelSyntaxError(`unexpected ${this.peek()?.text ?? 'end'}`);
    return node;
  }

  private peek(): Token | undefined {
    return this.tokens[this.at];
  }

  private accept(text: string): boolean {
    const token = this.peek();
    if (token && (token.kind === 'op' || token.kind === 'ident') && token.text === text) {
      this.at += 1;
      return true;
    }
    return false;
  }

  private expect(text: string): void {
    if (!this.accept(text)) throw new CelSyntaxError(`expected ${text}, got ${this.peek()?.text ?? 'end'}`);
  }

  private ternary(): Node {
    const condition = this.or();
    if (!this.accept('?')) return condition;
    const then = this.ternary();
    this.expect(':');
    return { type: 'ternary', condition, then, otherwise: this.ternary() };
  }

  private or(): Node {
    let left = this.and();
    while (this.accept('||')) left = { type: 'binary', op: '||', left, right: this.and() };
    return left;
  }

  private and(): Node {
    let left = this.relation();
    while (this.accept('&&')) left = { type: 'binary', op: '&&', left, right: this.relation() };
    return left;
  }

  private relation(): Node {
    let left = this.unary();
    for (;;) {
      const op = ['==', '!=', '<=', '>=', '<', '>', 'in'].find((candidate) => this.accept(candidate));
      if (!op) return left;
      left = { type: 'binary', op, left, right: this.unary() };
    }
  }

  private unary(): Node {
    if (this.accept('!')) return { type: 'unary', op: '!', operand: this.unary() };
    if (this.accept('-')) return { type: 'unary', op: '-', operand: this.unary() };
    return this.member();
  }

  private args(close: string): Node[] {
    const args: Node[] = [];
    if (this.accept(close)) return args;
    do args.push(this.ternary());
    while (this.accept(','));
    this.expect(close);
    return args;
  }

  private member(): Node {
    let node = this.primary();
    for (;;) {
      if (this.accept('.')) {
        const name = this.identifier();
        if (!this.accept('(')) {
          node = { type: 'select', target: node, field: name };
          continue;
        }
        const args = this.args(')');
        if (name === 'exists' || name === 'all' || name === 'exists_one') {
          const [variable, body] = args;
          if (args.length !== 2 || variable?.type !== 'ident' || !body) {
            throw new CelSyntaxError(`${name}() takes a variable and an expression`);
          }
          node = { type: 'macro', name, target: node, variable: variable.name, body };
        } else {
          node = { type: 'call', name: supported(name), target: node, args };
        }
      } else if (this.accept('[')) {
        const index = this.ternary();
        this.expect(']');
        node = { type: 'index', target: node, index };
      } else {
        return node;
      }
    }
  }

  private identifier(): string {
    const token = this.peek();
    if (token?.kind !== 'ident') throw new CelSyntaxError(`expected a name, got ${token?.text ?? 'end'}`);
    this.at += 1;
    return token.text;
  }

  private primary(): Node {
    const token = this.peek();
    if (!token) throw new CelSyntaxError('unexpected end');
    if (token.kind === 'number') {
      this.at += 1;
      return { type: 'literal', value: Number(token.text) };
    }
    if (token.kind === 'string') {
      this.at += 1;
      return { type: 'literal', value: unquote(token.text) };
    }
    if (this.accept('(')) {
      const inner = this.ternary();
      this.expect(')');
      return inner;
    }
    if (this.accept('[')) return { type: 'list', items: this.args(']') };
    const name = this.identifier();
    if (name === 'true' || name === 'false') return { type: 'literal', value: name === 'true' };
    if (name === 'null') return { type: 'literal', value: null };
    if (!this.accept('(')) return { type: 'ident', name };
    const args = this.args(')');
    if (name === 'has') {
      const [target] = args;
      if (args.length !== 1 || target?.type !== 'select')
        throw new CelSyntaxError('has() takes one field selection');
      return { type: 'has', target: target.target, field: target.field };
    }
    return { type: 'call', name: supported(name), args };
  }
}

const FUNCTIONS = new Set(['size', 'startsWith', 'endsWith', 'contains']);

function supported(name: string): string {
  if (!FUNCTIONS.has(name)) throw new CelSyntaxError(`unsupported function ${name}()`);
  return name;
}

/** Parses an expression; throws CelSyntaxError outside the supported subset. */
export function parseCel(source: string): Node {
  return new Parser(tokenize(source)).parse();
}

function isMap(value: CelValue): value is { [key: string]: CelValue } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function equal(a: CelValue, b: CelValue): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((item, i) => equal(item, b[i] ?? null));
  if (isMap(a) && isMap(b)) {
    const keys = Object.keys(a);
    return (
      keys.length === Object.keys(b).length &&
      keys.every((key) => Object.hasOwn(b, key) && equal(a[key] ?? null, b[key] ?? null))
    );
  }
  return false;
}

const typeName = (value: CelValue): string =>
  value === null ? 'null' : Array.isArray(value) ? 'list' : isMap(value) ? 'map' : typeof value;

function evaluate(node: Node, scope: ReadonlyMap<string, CelValue>): Result {
  switch (node.type) {
    case 'literal':
      return node.value;
    case 'ident':
      return scope.has(node.name)
        ? (scope.get(node.name) ?? null)
        : new CelError(`undeclared reference to '${node.name}'`);
    case 'list': {
      const items: CelValue[] = [];
      for (const item of node.items) {
        const value = evaluate(item, scope);
        if (value instanceof CelError) return value;
        items.push(value);
      }
      return items;
    }
    case 'select': {
      const target = evaluate(node.target, scope);
      if (target instanceof CelError) return target;
      if (!isMap(target)) return new CelError(`no such key: ${node.field} (on ${typeName(target)})`);
      const value = target[node.field];
      return value === undefined ? new CelError(`no such key: ${node.field}`) : value;
    }
    case 'has': {
      const target = evaluate(node.target, scope);
      if (target instanceof CelError) return target;
      if (!isMap(target)) return new CelError(`invalid type for field selection: ${typeName(target)}`);
      const value = target[node.field];
      return value !== undefined && value !== null;
    }
    case 'index': {
      const target = evaluate(node.target, scope);
      if (target instanceof CelError) return target;
      const index = evaluate(node.index, scope);
      if (index instanceof CelError) return index;
      if (Array.isArray(target) && typeof index === 'number') {
        return index >= 0 && index < target.length
          ? (target[index] ?? null)
          : new CelError(`index out of range: ${index}`);
      }
      if (isMap(target) && typeof index === 'string') {
        const value = target[index];
        return value === undefined ? new CelError(`no such key: ${index}`) : value;
      }
      return new CelError(`no such overload: ${typeName(target)}[${typeName(index)}]`);
    }
    case 'unary': {
      const operand = evaluate(node.operand, scope);
      if (operand instanceof CelError) return operand;
      if (node.op === '!' && typeof operand === 'boolean') return !operand;
      if (node.op === '-' && typeof operand === 'number') return -operand;
      return new CelError(`no such overload: ${node.op}${typeName(operand)}`);
    }
    case 'ternary': {
      const condition = evaluate(node.condition, scope);
      if (condition instanceof CelError) return condition;
      if (typeof condition !== 'boolean') return new CelError('no matching overload for ? :');
      return evaluate(condition ? node.then : node.otherwise, scope);
    }
    case 'binary':
      return binary(node.op, node.left, node.right, scope);
    case 'macro':
      return macro(node, scope);
    case 'call':
      return call(node, scope);
  }
}

function logical(op: '&&' | '||', left: Result, right: () => Result): Result {
  // The value that decides the outcome on its own wins over an error on the other side.
  const decisive = op === '||';
  if (left === decisive) return decisive;
  const other = right();
  if (other === decisive) return decisive;
  if (left instanceof CelError) return left;
  if (other instanceof CelError) return other;
  if (typeof left !== 'boolean' || typeof other !== 'boolean')
    return new CelError(`no such overload: ${op} on non-booleans`);
  return !decisive;
}

function binary(op: string, leftNode: Node, rightNode: Node, scope: ReadonlyMap<string, CelValue>): Result {
  if (op === '&&' || op === '||')
    return logical(op, evaluate(leftNode, scope), () => evaluate(rightNode, scope));
  const left = evaluate(leftNode, scope);
  if (left instanceof CelError) return left;
  const right = evaluate(rightNode, scope);
  if (right instanceof CelError) return right;
  switch (op) {
    case '==':
      return equal(left, right);
    case '!=':
      return !equal(left, right);
    case 'in':
      if (Array.isArray(right)) return right.some((item) => equal(item, left));
      if (isMap(right)) return typeof left === 'string' && Object.hasOwn(right, left);
      return new CelError(`no such overload: in ${typeName(right)}`);
    default: {
      const comparable =
        (typeof left === 'number' && typeof right === 'number') ||
        (typeof left === 'string' && typeof right === 'string');
      if (!comparable) return new CelError(`no such overload: ${typeName(left)} ${op} ${typeName(right)}`);
      const [a, b] = [left, right] as [number | string, number | string];
      return op === '<' ? a < b : op === '<=' ? a <= b : op === '>' ? a > b : a >= b;
    }
  }
}

function macro(node: Extract<Node, { type: 'macro' }>, scope: ReadonlyMap<string, CelValue>): Result {
  const target = evaluate(node.target, scope);
  if (target instanceof CelError) return target;
  const items = Array.isArray(target) ? target : isMap(target) ? Object.keys(target) : undefined;
  if (!items) return new CelError(`${node.name}() needs a list or map, got ${typeName(target)}`);
  let error: CelError | undefined;
  let trueCount = 0;
  const inner = new Map(scope);
  for (const item of items) {
    inner.set(node.variable, item);
    const value = evaluate(node.body, inner);
    if (value instanceof CelError) error ??= value;
    else if (typeof value !== 'boolean') error ??= new CelError(`${node.name}() needs a boolean predicate`);
    else if (value) {
      if (node.name === 'exists') return true;
      trueCount += 1;
    } else if (node.name === 'all') return false;
  }
  if (error) return error;
  if (node.name === 'exists') return false;
  if (node.name === 'all') return true;
  return trueCount === 1;
}

function call(node: Extract<Node, { type: 'call' }>, scope: ReadonlyMap<string, CelValue>): Result {
  const values: CelValue[] = [];
  for (const arg of node.target ? [node.target, ...node.args] : node.args) {
    const value = evaluate(arg, scope);
    if (value instanceof CelError) return value;
    values.push(value);
  }
  const [subject, argument] = values;
  if (node.name === 'size' && values.length === 1) {
    if (typeof subject === 'string') return [...subject].length;
    if (Array.isArray(subject)) return subject.length;
    if (subject !== undefined && subject !== null && isMap(subject)) return Object.keys(subject).length;
  }
  if (typeof subject === 'string' && typeof argument === 'string' && values.length === 2) {
    if (node.name === 'startsWith') return subject.startsWith(argument);
    if (node.name === 'endsWith') return subject.endsWith(argument);
    if (node.name === 'contains') return subject.includes(argument);
  }
  return new CelError(`no such overload: ${node.name}(${values.map(typeName).join(', ')})`);
}

/** A parsed expression, ready to evaluate against variables. */
export interface CelProgram {
  evaluate(variables: Readonly<Record<string, CelValue>>): Result;
}

export function compileCel(source: string): CelProgram {
  const node = parseCel(source);
  return { evaluate: (variables) => evaluate(node, new Map(Object.entries(variables))) };
}
