// Nitro's virtual module of runtime polyfills, which a server entry imports first (server/entry.ts).
declare module '#nitro-internal-pollyfills' {}
