/* eslint-disable */
  /**
   * Generated `api` utility.
   *
   * THIS CODE IS AUTOMATICALLY GENERATED.
   *
   * To regenerate, run `npx convex dev`.
   * @module
   */
  
  import type { ApiFromModules, FilterApi, FunctionReference } from "convex/server";
  import type * as accounts from "../accounts.js";
import type * as inputRequests from "../inputRequests.js";
import type * as jobs from "../jobs.js";
import type * as knowledge from "../knowledge.js";
import type * as leases from "../leases.js";
import type * as lib_jobBlobs from "../lib/jobBlobs.js";
import type * as lib_jobEvents from "../lib/jobEvents.js";
import type * as lib_jobRecords from "../lib/jobRecords.js";
import type * as lib_jobSlots from "../lib/jobSlots.js";
import type * as lib_jobText from "../lib/jobText.js";
import type * as lib_knowledgeTables from "../lib/knowledgeTables.js";
import type * as lib_messageParts from "../lib/messageParts.js";
import type * as lib_serverGuard from "../lib/serverGuard.js";
import type * as notifications from "../notifications.js";
import type * as rateLimits from "../rateLimits.js";
import type * as threads from "../threads.js";
import type * as workflowRuns from "../workflowRuns.js";
import type * as workflows from "../workflows.js";
import type * as workspaces from "../workspaces.js";

  /**
   * A utility for referencing Convex functions in your app's API.
   *
   * Usage:
   * ```js
   * const myFunctionReference = api.myModule.myFunction;
   * ```
   */
  declare const fullApi: ApiFromModules<{
    "accounts": typeof accounts,
"inputRequests": typeof inputRequests,
"jobs": typeof jobs,
"knowledge": typeof knowledge,
"leases": typeof leases,
"lib/jobBlobs": typeof lib_jobBlobs,
"lib/jobEvents": typeof lib_jobEvents,
"lib/jobRecords": typeof lib_jobRecords,
"lib/jobSlots": typeof lib_jobSlots,
"lib/jobText": typeof lib_jobText,
"lib/knowledgeTables": typeof lib_knowledgeTables,
"lib/messageParts": typeof lib_messageParts,
"lib/serverGuard": typeof lib_serverGuard,
"notifications": typeof notifications,
"rateLimits": typeof rateLimits,
"threads": typeof threads,
"workflowRuns": typeof workflowRuns,
"workflows": typeof workflows,
"workspaces": typeof workspaces,
  }>;
  export declare const api: FilterApi<typeof fullApi, FunctionReference<any, "public">>;
  export declare const internal: FilterApi<typeof fullApi, FunctionReference<any, "internal">>;
  