/**
 * Transactions recorded from a real pocketcoind 0.22.7 (regtest) on 2026-11-29, so that the
 * default test run (no node) also catches a broken encoder or signature hash.
 */

/**
 * Built and signed by the node's own wallet (createrawtransaction, signrawtransactionwithwallet):
 * 0.015 PKOIN to bob, the memo "vector memo", change; `decoderawtransaction` gave this txid,
 * version 2 and nTime 1795939628, and `testmempoolaccept` allowed it.
 */
export const NODE_SIGNED = {
  hex: '020000002cdd0b6b01263f1d7cd16fd98e1a1cd29f5286ab8be2a0972c623231eaf8c5338e2b688566000000006a473044022027d3fa16e2c7b5f4f2b29e45229a55b06a82d70a196295ad4b45b3e02226f9a502206dbbbbf0768cd2c7589a9930f4f1301c39da36bb0ca0dfd2fb331dd1f23ffa3b0121024dca04c842315e810c39b24e02b2372b00a20d118b3b258b30feb9b359792da9ffffffff0360e31600000000001976a914cb3be402b955c83970debf9e91e2de3dbe0664be88ac00000000000000000d6a0b766563746f72206d656d6f90e7ee29010000001976a9149833132f048c00713c740444790b1e9fe938b34788ac00000000',
  txid: '900d91b86653f8c25ae7127bfd6e3aecc34df50c780678eb42e39e0372e2aeef',
  nTime: 1795939628,
  spent: { txid: '6685682b8e33c5f8ea3132622c97a0e28bab86529fd21c1a8ed96fd17c1d3f26', vout: 0, scriptPubKey: '76a914a745ef71503819d1de191e25b80e55920ba4110988ac', amountSat: 5_000_000_000 },
  change: 'muPiBxh96ehiFraPFiMEKtWMiiZCzthEtP',
}

/** The dataset account alice (a throwaway regtest key) and bob. */
export const ALICE = { wif: 'cRvUwdEp6LsrNsD2suUbwXChEN6nCo5G6LgWB86qYTjdxWXzVH6j', address: 'micwoYEUVptxfhCnvaKmbbEDdTcEUEVeo4' }
export const BOB = 'mz3ZDGjU4bwpa8tcvKYsv1nMpHEBkGmXWw'

/** Two of alice's coins as the node's `txunspent` listed them. */
export const ALICE_UNSPENT = [
  { txid: '24cfdc12512da7a152a9adc6347c216db4432fb1c93723b51e1702e772bfe5ef', vout: 8, address: ALICE.address, amount: 0.19999999, amountSat: 19999999, scriptPubKey: '76a914220a76754ecd29581439d7b762a708f8385b69a788ac', coinbase: false, pockettx: true, confirmations: 75, height: 1022 },
  { txid: '24cfdc12512da7a152a9adc6347c216db4432fb1c93723b51e1702e772bfe5ef', vout: 9, address: ALICE.address, amount: 0.19999999, amountSat: 19999999, scriptPubKey: '76a914220a76754ecd29581439d7b762a708f8385b69a788ac', coinbase: false, pockettx: true, confirmations: 75, height: 1022 },
]

/**
 * buildPayment(alice, { coins: ALICE_UNSPENT, outputs: [{ address: BOB, amountSat: 25_000_000 }],
 * memo: 'payout #1 café', feeRateSatPerKb: 1000, nTime: 1795939700 }): the node's
 * `testmempoolaccept` allowed it with this txid, 403 bytes and a fee of 0.00000404.
 */
export const OURS = {
  hex: '0200000074dd0b6b02efe5bf72e702171eb52337c9b12f43b46d217c34c6ada952a1a72d5112dccf24080000006a47304402203bece52d8eea57c8537b6f0a27d0e15fa47b8a5a81a31119466f1249ca42934c02201687e8decea19be171c94339344a4e34298168be553f43fab0c5badda3d1359c012103f59176ffee5e647ad49bf2e173a6c6c10209ef98d43194ee99b6f0c6f4d51159ffffffffefe5bf72e702171eb52337c9b12f43b46d217c34c6ada952a1a72d5112dccf24090000006b48304502210089bdd9305503205edc20f9a27a7a05f0f86b0780b5d600bd91dcccb4779f9d1002206fee57751149f80a70527341a017ff439985780f695ee0c683df5d949c605377012103f59176ffee5e647ad49bf2e173a6c6c10209ef98d43194ee99b6f0c6f4d51159ffffffff0340787d01000000001976a914cb3be402b955c83970debf9e91e2de3dbe0664be88ac0000000000000000116a0f7061796f757420233120636166c3a92ae0e400000000001976a914220a76754ecd29581439d7b762a708f8385b69a788ac00000000',
  txid: '3a1a77fac8769e77a478c248a1c86fcac07df26d65aeafb6afef3aa8d2ec7a5c',
  feeSat: 404,
  changeSat: 14_999_594,
  vsize: 403,
}
