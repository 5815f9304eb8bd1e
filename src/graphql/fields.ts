/**
 * @module Which fields of a schema are idempotent (schema coordinates from the options, and fields marked with the
 * directive in SDL) and the checks that a coordinate names a field that can be one. Done once per schema.
 */
import type { GraphQLField, GraphQLNamedType, GraphQLObjectType, GraphQLSchema } from 'graphql';
import { InvalidOptionsError } from '../core/errors.js';

/** The SDL that declares the directive, to put beside the schema's type definitions. */
export const idempotentDirective = 'directive @idempotent on FIELD_DEFINITION';

export interface IdempotentField {
  /** `Type.field`: the name the field's records are scoped and labelled by. */
  readonly coordinate: string;
  // graphql's own field type, whose source, context and args are any: the plugin wraps every kind of field.
  // biome-ignore lint/suspicious/noExplicitAny: GraphQLField's defaults are any
  readonly field: GraphQLField<any, any>;
}

/**
 * The fields to make idempotent. Throws `InvalidOptionsError` for a coordinate that names no field, or a field of
 * the query or subscription type: those are reads, which must never be refused for a busy key.
 */
export function idempotentFields(
  schema: GraphQLSchema,
  coordinates: readonly string[],
  directive: string | undefined,
  name: string,
): IdempotentField[] {
  const found = new Map<string, IdempotentField>();
  const reads = new Set([schema.getQueryType()?.name, schema.getSubscriptionType()?.name]);
  for (const coordinate of coordinates) {
    const [typeName, fieldName] = coordinate.split('.') as [string, string];
    const type = schema.getType(typeName);
    const field = isObjectType(type) ? type.getFields()[fieldName] : undefined;
    if (field === undefined) throw new InvalidOptionsError(`${name}: the schema has no field ${coordinate}`);
    if (reads.has(typeName))
      throw new InvalidOptionsError(
        `${name}: ${coordinate} is a field of the ${typeName} type; only mutation fields can be idempotent`,
      );
    found.set(coordinate, { coordinate, field });
  }
  if (directive === undefined) return [...found.values()];
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) {
      if (!field.astNode?.directives?.some((node) => node.name.value === directive)) continue;
      const coordinate = `${type.name}.${field.name}`;
      if (reads.has(type.name))
        throw new InvalidOptionsError(
          `${name}: ${coordinate} is marked @${directive}, but it is a field of the ${type.name} type; only mutation fields can be idempotent`,
        );
      found.set(coordinate, { coordinate, field });
    }
  }
  return [...found.values()];
}

/**
 * graphql's `isObjectType` by the type's tag rather than `instanceof`: a schema built by another copy of graphql
 * (a bundler resolving its ESM build for one package and its CommonJS build for another) is still read.
 */
function isObjectType(type: GraphQLNamedType | undefined | null): type is GraphQLObjectType {
  return type?.[Symbol.toStringTag] === 'GraphQLObjectType';
}
