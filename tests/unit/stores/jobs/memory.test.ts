import { createMemoryJobStore } from '../../../../server/lib/stores/jobs/memory'
import { describeJobStoreContract } from '../../../support/job-store-contract'

describeJobStoreContract('memory', () => createMemoryJobStore())
