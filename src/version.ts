/** This package's version, as package.json says (a test keeps the two equal). */
export const PACKAGE_VERSION = '0.1.0';
