import { createMemoryJobProvider } from '../../server/utils/background-jobs/providers/memory'
import { describeJobProviderContract } from '../support/job-provider-contract'

describeJobProviderContract('memory', () => createMemoryJobProvider())
