import { Initial1763884800000 } from './1763884800000-Initial.js';
import { LinkedAccountNeedsRelink1764000000000 } from './1764000000000-LinkedAccountNeedsRelink.js';
import { ExecutionLog1764000000001 } from './1764000000001-ExecutionLog.js';
import { CacheGenerations1764000000002 } from './1764000000002-CacheGenerations.js';
import { SearchIndex1765000000000 } from './1765000000000-SearchIndex.js';
import { OAuth2States1766000000000 } from './1766000000000-OAuth2States.js';
import { ExecutionLogKey1767000000000 } from './1767000000000-ExecutionLogKey.js';
import { ConnectLinks1768100000000 } from './1768100000000-ConnectLinks.js';
import { Mcp1768400000000 } from './1768400000000-Mcp.js';
import { ApiKeyExpiry1768800000000 } from './1768800000000-ApiKeyExpiry.js';
import { RateLimits1768900000000 } from './1768900000000-RateLimits.js';
import { DropSearchTsvector1769500000000 } from './1769500000000-DropSearchTsvector.js';
import { ByteOrderNameIndexes1769600000000 } from './1769600000000-ByteOrderNameIndexes.js';
import { SearchDocumentsOperation1769700000000 } from './1769700000000-SearchDocumentsOperation.js';
import { McpServers1769710000000 } from './1769710000000-McpServers.js';
import { OwnerExecutionLimit1769800000000 } from './1769800000000-OwnerExecutionLimit.js';
import { McpOAuth1769900000000 } from './1769900000000-McpOAuth.js';
import { AuditEvents1770000000000 } from './1770000000000-AuditEvents.js';
import { EndUserPages1770100000000 } from './1770100000000-EndUserPages.js';
import { AuditRetention1770200000000 } from './1770200000000-AuditRetention.js';
import { ServerVariables1770400000000 } from './1770400000000-ServerVariables.js';
import { PrivateApps1770500000000 } from './1770500000000-PrivateApps.js';

/** Applied in this order; a new migration is appended here. */
export const MIGRATIONS = [
  Initial1763884800000,
  LinkedAccountNeedsRelink1764000000000,
  ExecutionLog1764000000001,
  CacheGenerations1764000000002,
  SearchIndex1765000000000,
  OAuth2States1766000000000,
  ExecutionLogKey1767000000000,
  ConnectLinks1768100000000,
  Mcp1768400000000,
  ApiKeyExpiry1768800000000,
  RateLimits1768900000000,
  DropSearchTsvector1769500000000,
  ByteOrderNameIndexes1769600000000,
  SearchDocumentsOperation1769700000000,
  McpServers1769710000000,
  OwnerExecutionLimit1769800000000,
  McpOAuth1769900000000,
  AuditEvents1770000000000,
  EndUserPages1770100000000,
  AuditRetention1770200000000,
  ServerVariables1770400000000,
  PrivateApps1770500000000,
];
