/**
 * bastyon-miniapp-testkit: test a Bastyon mini-app offline. A Pocketnet node emulator that mines
 * and pays when told (`startDevnode`, also `npx bastyon-devnode`), a user who signs as the Bastyon
 * host signs (`testSigner`), and a stand-in for the host's SDK for bastyon-miniapp-client in Node
 * (`standInHost`), and the same host's signer and wallet as routes for a page in a plain browser
 * (`mountDevHost`); and a Bastyon proxy's mini-app routes (`startBastyonProxy`), which record the
 * notifications a back-end pushes through them.
 */
export { startDevnode, type Devnode, type DevnodeOptions, type DevnodePayment, type MinedBlock, type TransactionStatus } from './devnode.js'
export { testSigner, type HostSignature, type SignerNetwork, type SignOptions, type TestSigner, type TestSignerOptions } from './signer.js'
export { mountDevHost, type DevHostOptions } from './dev-host.js'
export { PROXY_CONTROLS_PATH, PROXY_SESSION, startBastyonProxy, type BastyonProxy, type BastyonProxyOptions, type ProxyApp, type ProxyFault, type ProxyToken, type RecordedPush } from '../../../devnode/bastyon-proxy.js'
export { standInHost, type Host, type HostPaymentMade, type HostPaymentRequest, type ProxyTokenRow, type StandInHost, type StandInHostOptions } from './stand-in-host.js'
export type { Dataset, Emulator, Fault, FaultScope, UserRecord } from '../../../devnode/server.js'
export { startTelegramBotApi, EMULATOR_BOT_TOKEN, TELEGRAM_CONTROLS_PATH, type TelegramBotApi, type TelegramBotApiOptions, type TelegramFault, type TelegramUpdate, type TelegramMessage, type SentMessage, type UserMessage, type WebhookDelivery, type WebhookAttempt, type WebhookInfo } from '../../../devnode/telegram-bot-api.js'
