/**
 * Route schemas compiled at a route's first request instead of at the start. Fastify compiles
 * every route's validators (Ajv) and response serializers (fast-json-stringify) as the routes are
 * registered: ~0.7 s of CPU in a 2.1–2.4 s start on this machine, for every route whether or not
 * a client ever calls it. Here each part compiles when its route is first used, once, with
 * Fastify's own compilers and options, so validation and serialization are unchanged.
 */
import AjvCompiler from '@fastify/ajv-compiler';
import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import type { FastifyServerOptions } from 'fastify';

type Factories = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;
type AnyFunction = (...args: any[]) => any;

/** `compile(definition)` deferred to the first call; Ajv's `errors` and `schemaEnv` read through. */
function deferred<C extends AnyFunction>(compile: C): C {
  return ((definition: unknown) => {
    let compiled: AnyFunction | null = null;
    const run = Object.assign(
      (...args: unknown[]) => {
        compiled ??= compile(definition) as AnyFunction;
        const result = compiled(...args);
        run.errors = (compiled as { errors?: unknown }).errors;
        return result;
      },
      // Fastify passes the parent object (so Ajv may coerce a root value) only to a function
      // that has this; every Ajv validator has it.
      { errors: undefined as unknown, schemaEnv: true },
    );
    return run;
  }) as unknown as C;
}

export function lazySchemaCompilers(): Factories {
  const validators = AjvCompiler();
  const serializers = SerializerSelector();
  return {
    buildValidator: ((externalSchemas: unknown, options: unknown) => deferred((validators as AnyFunction)(externalSchemas, options))) as Factories['buildValidator'],
    buildSerializer: ((externalSchemas: unknown, options: unknown) => deferred((serializers as AnyFunction)(externalSchemas, options))) as Factories['buildSerializer'],
  };
}
