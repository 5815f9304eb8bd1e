/**
 * @module `OncelyModule`: the idempotency layer as a global Nest module, configured once in the root module
 * (`forRoot`, or `forRootAsync` with injected dependencies) and providing the routes registry and the interceptor to
 * every controller.
 */
import {
  type DynamicModule,
  type FactoryProvider,
  Module,
  type ModuleMetadata,
  type Provider,
} from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import type { NestRequest } from './exchange.js';
import { IdempotencyInterceptor } from './interceptor.js';
import { ONCELY_OPTIONS, type OncelyModuleOptions } from './metadata.js';
import { OncelyRoutes } from './routes.js';

/** `forRootAsync`: the options from a factory, with what it injects (a ConfigService, your Redis client). */
export interface OncelyModuleAsyncOptions<Req = NestRequest> {
  readonly imports?: ModuleMetadata['imports'];
  readonly inject?: FactoryProvider['inject'];
  readonly useFactory: (...args: never[]) => OncelyModuleOptions<Req> | Promise<OncelyModuleOptions<Req>>;
}

/**
 * The idempotency layer of a Nest application, imported once in the root module. Global: `@Idempotent()` works in
 * every module's controllers. The options are those of every oncely HTTP adapter (docs/http.md), checked when the
 * module is created.
 *
 * @example
 * @Module({
 *   imports: [OncelyModule.forRoot({ store: new RedisStore({ client }) })],
 *   controllers: [PaymentsController],
 * })
 * export class AppModule {}
 */
// biome-ignore lint/complexity/noStaticOnlyClass: Nest knows a module by its class; forRoot is how Nest modules take options.
export class OncelyModule {
  static forRoot<Req = NestRequest>(options: OncelyModuleOptions<Req>): DynamicModule {
    return moduleWith({ provide: ONCELY_OPTIONS, useValue: options }, []);
  }

  static forRootAsync<Req = NestRequest>(options: OncelyModuleAsyncOptions<Req>): DynamicModule {
    return moduleWith(
      {
        provide: ONCELY_OPTIONS,
        useFactory: options.useFactory as (...args: unknown[]) => unknown,
        inject: options.inject ?? [],
      },
      options.imports ?? [],
    );
  }
}

function moduleWith(options: Provider, imports: NonNullable<ModuleMetadata['imports']>): DynamicModule {
  return {
    module: OncelyModule,
    global: true,
    imports: [DiscoveryModule, ...imports],
    providers: [options, OncelyRoutes, IdempotencyInterceptor],
    exports: [OncelyRoutes, IdempotencyInterceptor],
  };
}

// @Module() without decorator syntax (see routes.ts): the dynamic module above says what it holds.
Module({})(OncelyModule);
