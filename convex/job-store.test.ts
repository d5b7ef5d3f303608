import { convexTest } from 'convex-test'
import { beforeEach } from 'vitest'
import { createConvexJobStore, type ConvexFunctionClient } from '../server/lib/stores/jobs/convex'
import { describeJobStoreContract } from '../tests/support/job-store-contract'
import { describeThreadStoreContract } from '../tests/support/thread-store-contract'
import { createConvexThreadStore } from '../server/lib/stores/threads/convex'
import { createConvexWorkflowStore } from '../server/lib/stores/workflows/convex'
import { describeWorkflowStoreContract } from '../tests/support/workflow-store-contract'
import { createConvexWorkflowRunStore } from '../server/lib/stores/workflows/runs-convex'
import { describeWorkflowRunStoreContract } from '../tests/support/workflow-run-store-contract'
import schema from './schema'
import { createConvexAccountBackend } from '../server/lib/stores/accounts/convex'
import { describeAccountStoreContract } from '../tests/support/account-store-contract'
import { withAccountCache } from '../server/lib/stores/accounts/cached'
import { createConvexWorkspaceStore } from '../server/lib/stores/workspaces/convex'
import { describeWorkspaceStoreContract } from '../tests/support/workspace-store-contract'
import { createConvexKnowledgeStore } from '../server/lib/stores/knowledge/convex'
import { describeKnowledgeStoreContract } from '../tests/support/knowledge-store-contract'

const modules = import.meta.glob('./**/*.ts')
const secret = 'a-convex-test-server-secret-of-enough-length'

beforeEach(() => {
  process.env.OR3_SERVER_SECRET = secret
})

/** A convex-test backend as the store's client (same calls; its generic signatures differ in TS only). */
function testClient(): ConvexFunctionClient {
  return convexTest({ schema, modules, transactionLimits: true }) as unknown as ConvexFunctionClient
}

describeJobStoreContract('convex (convex-test)', () => createConvexJobStore({ client: testClient(), secret }))

describeThreadStoreContract('convex (convex-test)', () => createConvexThreadStore({ client: testClient(), secret }))

describeWorkflowStoreContract('convex (convex-test)', () => createConvexWorkflowStore({ client: testClient(), secret }))

describeWorkflowRunStoreContract('convex (convex-test)', () => createConvexWorkflowRunStore({ client: testClient(), secret }))

describeAccountStoreContract('convex (convex-test)', () => createConvexAccountBackend({ client: testClient(), secret }))

// As the server opens it: account lookups cached, and forgotten when this instance changes them.
describeAccountStoreContract('convex with the account cache (convex-test)', () => withAccountCache(createConvexAccountBackend({ client: testClient(), secret }), 60_000))

describeWorkspaceStoreContract('convex (convex-test)', () => createConvexWorkspaceStore({ client: testClient(), secret }))

describeKnowledgeStoreContract('convex (convex-test)', () => createConvexKnowledgeStore({ client: testClient(), secret }))
