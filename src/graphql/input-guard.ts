import { Kind, visit, type DocumentNode, type ExecutionArgs, type ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { DomainError, isDomainError } from '../domain/errors.ts';
import { guardInput, isStorableText } from '../domain/input-guard.ts';
import type { GraphQLContext } from './context.ts';
import { toGraphQLError } from './errors.ts';

/**
 * The GraphQL input boundary (src/domain/input-guard.ts says why): raw
 * variables and the document's string literals, checked before execution
 * coerces or resolves anything. It hooks execute and subscribe, which HTTP
 * and graphql-ws share, so both are covered. A refused request is a request
 * error like a variable that does not coerce: `invalid_request` with the
 * offending variable's path as `param`, HTTP 400 (under either media type,
 * as Yoga answers variable errors).
 */
export function inputGuard(): Plugin<GraphQLContext> {
  const check = (args: ExecutionArgs, stop: (result: ExecutionResult) => void) => {
    try {
      guardDocument(args.document);
      for (const [name, value] of Object.entries(args.variableValues ?? {})) guardInput(value, name);
    } catch (e) {
      if (!isDomainError(e)) throw e;
      stop({ errors: [toGraphQLError(e, (args.contextValue as GraphQLContext).requestId, 'always')] });
    }
  };
  return {
    onExecute: ({ args, setResultAndStopExecution }) => check(args, setResultAndStopExecution),
    onSubscribe: ({ args, setResultAndStopExecution }) => check(args, setResultAndStopExecution),
  };
}

/**
 * The lexer already refuses raw NULs and unpaired surrogate escapes; only a
 * `\u0000` or `\u{0}` escape yields an unstorable literal, so the document
 * is walked only when its source spells one.
 */
const NUL_ESCAPE = /\\u(?:0000|\{0+\})/i;

function guardDocument(document: DocumentNode): void {
  const source = document.loc?.source.body;
  if (source !== undefined && !NUL_ESCAPE.test(source)) return;
  const names: string[] = [];
  visit(document, {
    Argument: { enter: (n) => void names.push(n.name.value), leave: () => void names.pop() },
    ObjectField: { enter: (n) => void names.push(n.name.value), leave: () => void names.pop() },
    [Kind.STRING]: (n) => {
      if (!isStorableText(n.value)) {
        const param = names.join('.') || null;
        throw new DomainError(
          'invalid_request',
          `${param ?? 'A string literal'} contains a NUL character (U+0000), which cannot be stored`,
          param,
        );
      }
    },
  });
}
