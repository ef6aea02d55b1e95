/**
 * The local stack's public entry, kept at this path for tool authors' tests.
 * The stack itself lives with the rest of `npm start` in `bin/local/`.
 */
export { type LocalAuthOptions, type LocalStack, type LocalStackOptions, startLocalStack } from '../../bin/local/stack.ts';
