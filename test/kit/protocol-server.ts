/** The local server speaking the providers' wire protocols (test/helpers/protocol-server.ts). */
export * from '../helpers/protocol-server.ts';
