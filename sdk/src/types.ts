import type { operations } from './schema.js';

/** Types of one operation of the document, by its operationId. */
export type OperationId = keyof operations;

type Json<R> = R extends { content: { 'application/json': infer T } } ? T : never;
type SuccessOf<R> = R extends { 200: infer A }
  ? Json<A>
  : R extends { 201: infer B }
    ? Json<B>
    : never;

/** The JSON body of the operation's success answer. */
export type Result<K extends OperationId> = SuccessOf<operations[K]['responses']>;

/** The JSON body the operation takes. */
export type Body<K extends OperationId> =
  NonNullable<operations[K]['requestBody']> extends { content: { 'application/json': infer B } }
    ? B
    : never;

/** Its query parameters, less the dry-run switch (WriteOptions.dryRun sends it). */
export type Query<K extends OperationId> = Omit<
  NonNullable<operations[K]['parameters']['query']>,
  'dry_run'
>;

/** A path parameter: an id, as a number or as the text the service prints. */
export type Id = number | string;
