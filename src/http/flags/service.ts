import { FlagService } from '../../flags-service/index.js';
import type { AppContext } from '../context.js';

const services = new WeakMap<AppContext, FlagService>();

/** The one FlagService of a running app, shared by the flag routes and the management API. */
export function flagServiceFor(ctx: AppContext): FlagService {
  let service = services.get(ctx);
  if (!service) {
    service = new FlagService(ctx.stores.meta.flags, ctx.geoip, ctx.log);
    services.set(ctx, service);
  }
  return service;
}
