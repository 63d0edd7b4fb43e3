// Inside Bastyon, a mini-app runs in an iframe and talks to the host through the Bastyon mini-app
// SDK (the global BastyonSdk: new BastyonSdk(), init(), emit('loaded'),
// permissions.request(['account']), get.account() → { address }), which the host page's
// developer includes with a script tag. Standalone, there is no SDK and this module does nothing.

/** The signed-in user's address, when the SDK is there and the user grants `account`; else undefined. */
export async function connectBastyon () {
  const Sdk = globalThis.BastyonSdk
  if (typeof Sdk !== 'function') return undefined
  try {
    const sdk = new Sdk()
    await sdk.init()
    sdk.emit?.('loaded')
    return {
      async myAddress () {
        await sdk.permissions.request(['account'])
        const account = await sdk.get.account()
        return typeof account?.address === 'string' ? account.address : undefined
      },
    }
  } catch {
    return undefined
  }
}
