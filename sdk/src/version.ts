/** The package's version, sent in `User-Agent`; a test keeps it equal to package.json's. */
export const VERSION = '0.1.0'
