/**
 * @module Loads an optional peer dependency for a command, saying how to install it when it is missing.
 */
import { UsageError } from './errors.js';

/** Imports an optional peer dependency (pg, ioredis), saying how to install it when it is missing. */
export async function requirePeer<T>(name: string): Promise<T> {
  try {
    return (await import(name)) as T;
  } catch {
    throw new UsageError(`this command needs the "${name}" package: npm install ${name}`);
  }
}
