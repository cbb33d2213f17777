import { Injectable } from '@nestjs/common';
import type { Connector } from './connector.js';
import { CONNECTORS } from './index.js';

/** The in-process connectors by catalogue function name. */
@Injectable()
export class ConnectorRegistry {
  private readonly connectors = new Map<string, Connector>();

  constructor() {
    for (const connector of CONNECTORS) {
      if (this.connectors.has(connector.functionName)) {
        throw new Error(`Two connectors implement ${connector.functionName}`);
      }
      this.connectors.set(connector.functionName, connector);
    }
  }

  find(functionName: string): Connector | undefined {
    return this.connectors.get(functionName);
  }
}
