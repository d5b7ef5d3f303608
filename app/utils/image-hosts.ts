import type { InjectionKey } from 'vue'

/** The origins whose images answers may show inline (NUXT_PUBLIC_IMAGE_HOSTS), provided by plugins/image-hosts.ts. */
export const IMAGE_HOSTS: InjectionKey<readonly string[]> = Symbol('image-hosts')
