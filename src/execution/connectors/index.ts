import type { Connector } from './connector.js';
import { formatDatetimeConnector } from './format-datetime.connector.js';

/** Every connector this service ships, registered by the function name it implements. */
export const CONNECTORS: readonly Connector[] = [formatDatetimeConnector];
