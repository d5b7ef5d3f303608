/** SCIM 2.0 provisioning by the operator's identity provider (Users, Groups; see docs/accounts.md). */
export default defineEventHandler(event => answerScim(event))
