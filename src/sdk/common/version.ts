/** Sent in Register.sdk_name / sdk_version; keep in step with package.json. */
export const SDK_NAME = 'zdmatch-ts';
export const SDK_VERSION = '0.1.0';
