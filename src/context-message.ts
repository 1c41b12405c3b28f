/** The FAPI 2.0 authentication context message: one rule, so the client refuses what the provider would. */

/** Longest context message, in characters (code points). */
export const MAX_CONTEXT_MESSAGE_LENGTH = 100;

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
const NOT_ONE_LINE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/** Why `message` cannot be shown (a sentence ending without a full stop), or undefined when it can. */
export function contextMessageProblem(message: string): string | undefined {
  if (message.trim() === '') return 'must not be blank';
  const length = [...message].length;
  if (length > MAX_CONTEXT_MESSAGE_LENGTH)
    return `has ${length} characters; the approval screen shows at most ${MAX_CONTEXT_MESSAGE_LENGTH}: shorten it`;
  if (NOT_ONE_LINE.test(message)) return 'must be one line of text, without control characters';
  return undefined;
}
