/** The `_geo` HTTP API (hastings / Cloudant Geo), mounted by createUpholster over the runtime's GeoService. */
export { geoRoutes } from "./routes.js";
