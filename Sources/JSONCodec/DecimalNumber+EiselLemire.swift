extension DecimalNumber {
    /// `mantissa` x 10^`exponent`, correctly rounded, for a mantissa of at most 19 decimal digits read whole
    /// (none dropped) and an exponent within the table below; nil otherwise (the caller asks `strtod`).
    ///
    /// The Eisel-Lemire algorithm (Daniel Lemire, "Number Parsing at a Gigabyte per Second", 2021): the mantissa,
    /// shifted so its top bit is set, times a 128-bit approximation of 5^exponent (the power of two of 10^q is
    /// exact and goes to the binary exponent) gives the leading bits of the exact product; they decide the
    /// correctly rounded double except at an exact tie, which only small exponents can make and which the low
    /// bits show. GPS receivers write 6-8 decimals, which Clinger's fast path takes; this is for the 16 to 17
    /// significant digits of a computed double written in full (what many backends send), without the String
    /// and the C library's `strtod` a correct answer would otherwise need.
    static func eiselLemire(_ mantissa: UInt64, exponent q: Int) -> Double? {
        guard mantissa != 0, q >= lowestPowerOfFive, q <= lowestPowerOfFive + powersOfFive.count - 1 else {
            return nil
        }
        let leadingZeros = mantissa.leadingZeroBitCount
        let normalized = mantissa << leadingZeros
        let power = powersOfFive[q - lowestPowerOfFive]
        var (high, low) = normalized.multipliedFullWidth(by: power.high)
        // A double needs 55 of the product's bits (53 of mantissa, one to round with, one in case the top bit is
        // clear). When the 9 below them are all ones, the truncated half of the power may carry into them.
        if high & 0x1FF == 0x1FF {
            let (sum, carry) = low.addingReportingOverflow(normalized.multipliedFullWidth(by: power.low).high)
            low = sum
            if carry { high &+= 1 }
        }
        // Where even 128 bits of the power cannot tell (never met, but not proven impossible for every
        // exponent by the original analysis), the slow path decides.
        if low == .max && (q < -27 || q > 55) { return nil }
        let upperBit = Int(high >> 63)
        let shift = upperBit + 9
        var bits = high >> shift
        // floor(log2(10^q)) + 63, as (152170 + 65536) * q / 2^16 approximates it, plus the IEEE bias.
        var biasedExponent = ((217_706 * q) >> 16) + 63 + upperBit - leadingZeros + 1023
        // Subnormal or infinite: not in this table's range, but left to the slow path rather than assumed.
        guard biasedExponent > 0 else { return nil }
        // An exact tie between two doubles rounds to the even one: only when nothing but zeros was shifted out,
        // which the low half shows for exponents from -4 to 23.
        if low <= 1 && q >= -4 && q <= 23 && bits & 3 == 1 && bits << shift == high {
            bits &= ~1
        }
        bits += bits & 1
        bits >>= 1
        if bits >= 1 << 53 {
            // Rounding carried into a new bit.
            bits = 1 << 52
            biasedExponent += 1
        }
        guard biasedExponent < 0x7FF else { return nil }
        return Double(bitPattern: UInt64(biasedExponent) << 52 | bits & ~(1 << 52))
    }

    /// The exponent of the first entry of `powersOfFive`.
    private static let lowestPowerOfFive = -64

    /// 5^q for q from -64 to 64 in 128 bits (high, low), made by `tools/numbers/powers_of_five.py`: for q >= 0
    /// truncated with its top bit at bit 127, for q < 0 2^b / 5^-q rounded up, as the algorithm's proof wants.
    private static let powersOfFive: [(high: UInt64, low: UInt64)] = [
        (0xA87F_EA27_A539_E9A5, 0x3F23_98D7_47B3_6224),  // 5^-64
        (0xD29F_E4B1_8E88_640E, 0x8EEC_7F0D_19A0_3AAD),  // 5^-63
        (0x83A3_EEEE_F915_3E89, 0x1953_CF68_3004_24AC),  // 5^-62
        (0xA48C_EAAA_B75A_8E2B, 0x5FA8_C342_3C05_2DD7),  // 5^-61
        (0xCDB0_2555_6531_31B6, 0x3792_F412_CB06_794D),  // 5^-60
        (0x808E_1755_5F3E_BF11, 0xE2BB_D88B_BEE4_0BD0),  // 5^-59
        (0xA0B1_9D2A_B70E_6ED6, 0x5B6A_CEAE_AE9D_0EC4),  // 5^-58
        (0xC8DE_0475_64D2_0A8B, 0xF245_825A_5A44_5275),  // 5^-57
        (0xFB15_8592_BE06_8D2E, 0xEED6_E2F0_F0D5_6712),  // 5^-56
        (0x9CED_737B_B6C4_183D, 0x5546_4DD6_9685_606B),  // 5^-55
        (0xC428_D05A_A475_1E4C, 0xAA97_E14C_3C26_B886),  // 5^-54
        (0xF533_0471_4D92_65DF, 0xD53D_D99F_4B30_66A8),  // 5^-53
        (0x993F_E2C6_D07B_7FAB, 0xE546_A803_8EFE_4029),  // 5^-52
        (0xBF8F_DB78_849A_5F96, 0xDE98_5204_72BD_D033),  // 5^-51
        (0xEF73_D256_A5C0_F77C, 0x963E_6685_8F6D_4440),  // 5^-50
        (0x95A8_6376_2798_9AAD, 0xDDE7_0013_79A4_4AA8),  // 5^-49
        (0xBB12_7C53_B17E_C159, 0x5560_C018_580D_5D52),  // 5^-48
        (0xE9D7_1B68_9DDE_71AF, 0xAAB8_F01E_6E10_B4A6),  // 5^-47
        (0x9226_7121_62AB_070D, 0xCAB3_9613_04CA_70E8),  // 5^-46
        (0xB6B0_0D69_BB55_C8D1, 0x3D60_7B97_C5FD_0D22),  // 5^-45
        (0xE45C_10C4_2A2B_3B05, 0x8CB8_9A7D_B77C_506A),  // 5^-44
        (0x8EB9_8A7A_9A5B_04E3, 0x77F3_608E_92AD_B242),  // 5^-43
        (0xB267_ED19_40F1_C61C, 0x55F0_38B2_3759_1ED3),  // 5^-42
        (0xDF01_E85F_912E_37A3, 0x6B6C_46DE_C52F_6688),  // 5^-41
        (0x8B61_313B_BABC_E2C6, 0x2323_AC4B_3B3D_A015),  // 5^-40
        (0xAE39_7D8A_A96C_1B77, 0xABEC_975E_0A0D_081A),  // 5^-39
        (0xD9C7_DCED_53C7_2255, 0x96E7_BD35_8C90_4A21),  // 5^-38
        (0x881C_EA14_545C_7575, 0x7E50_D641_77DA_2E54),  // 5^-37
        (0xAA24_2499_6973_92D2, 0xDDE5_0BD1_D5D0_B9E9),  // 5^-36
        (0xD4AD_2DBF_C3D0_7787, 0x955E_4EC6_4B44_E864),  // 5^-35
        (0x84EC_3C97_DA62_4AB4, 0xBD5A_F13B_EF0B_113E),  // 5^-34
        (0xA627_4BBD_D0FA_DD61, 0xECB1_AD8A_EACD_D58E),  // 5^-33
        (0xCFB1_1EAD_4539_94BA, 0x67DE_18ED_A581_4AF2),  // 5^-32
        (0x81CE_B32C_4B43_FCF4, 0x80EA_CF94_8770_CED7),  // 5^-31
        (0xA242_5FF7_5E14_FC31, 0xA125_8379_A94D_028D),  // 5^-30
        (0xCAD2_F7F5_359A_3B3E, 0x096E_E458_13A0_4330),  // 5^-29
        (0xFD87_B5F2_8300_CA0D, 0x8BCA_9D6E_1888_53FC),  // 5^-28
        (0x9E74_D1B7_91E0_7E48, 0x775E_A264_CF55_347E),  // 5^-27
        (0xC612_0625_7658_9DDA, 0x9536_4AFE_032A_819E),  // 5^-26
        (0xF796_87AE_D3EE_C551, 0x3A83_DDBD_83F5_2205),  // 5^-25
        (0x9ABE_14CD_4475_3B52, 0xC492_6A96_7279_3543),  // 5^-24
        (0xC16D_9A00_9592_8A27, 0x75B7_053C_0F17_8294),  // 5^-23
        (0xF1C9_0080_BAF7_2CB1, 0x5324_C68B_12DD_6339),  // 5^-22
        (0x971D_A050_74DA_7BEE, 0xD3F6_FC16_EBCA_5E04),  // 5^-21
        (0xBCE5_0864_9211_1AEA, 0x88F4_BB1C_A6BC_F585),  // 5^-20
        (0xEC1E_4A7D_B695_61A5, 0x2B31_E9E3_D06C_32E6),  // 5^-19
        (0x9392_EE8E_921D_5D07, 0x3AFF_322E_6243_9FD0),  // 5^-18
        (0xB877_AA32_36A4_B449, 0x09BE_FEB9_FAD4_87C3),  // 5^-17
        (0xE695_94BE_C44D_E15B, 0x4C2E_BE68_7989_A9B4),  // 5^-16
        (0x901D_7CF7_3AB0_ACD9, 0x0F9D_3701_4BF6_0A11),  // 5^-15
        (0xB424_DC35_095C_D80F, 0x5384_84C1_9EF3_8C95),  // 5^-14
        (0xE12E_1342_4BB4_0E13, 0x2865_A5F2_06B0_6FBA),  // 5^-13
        (0x8CBC_CC09_6F50_88CB, 0xF93F_87B7_442E_45D4),  // 5^-12
        (0xAFEB_FF0B_CB24_AAFE, 0xF78F_69A5_1539_D749),  // 5^-11
        (0xDBE6_FECE_BDED_D5BE, 0xB573_440E_5A88_4D1C),  // 5^-10
        (0x8970_5F41_36B4_A597, 0x3168_0A88_F895_3031),  // 5^-9
        (0xABCC_7711_8461_CEFC, 0xFDC2_0D2B_36BA_7C3E),  // 5^-8
        (0xD6BF_94D5_E57A_42BC, 0x3D32_9076_0469_1B4D),  // 5^-7
        (0x8637_BD05_AF6C_69B5, 0xA63F_9A49_C2C1_B110),  // 5^-6
        (0xA7C5_AC47_1B47_8423, 0x0FCF_80DC_3372_1D54),  // 5^-5
        (0xD1B7_1758_E219_652B, 0xD3C3_6113_404E_A4A9),  // 5^-4
        (0x8312_6E97_8D4F_DF3B, 0x645A_1CAC_0831_26EA),  // 5^-3
        (0xA3D7_0A3D_70A3_D70A, 0x3D70_A3D7_0A3D_70A4),  // 5^-2
        (0xCCCC_CCCC_CCCC_CCCC, 0xCCCC_CCCC_CCCC_CCCD),  // 5^-1
        (0x8000_0000_0000_0000, 0x0000_0000_0000_0000),  // 5^0
        (0xA000_0000_0000_0000, 0x0000_0000_0000_0000),  // 5^1
        (0xC800_0000_0000_0000, 0x0000_0000_0000_0000),  // 5^2
        (0xFA00_0000_0000_0000, 0x0000_0000_0000_0000),  // 5^3
        (0x9C40_0000_0000_0000, 0x0000_0000_0000_0000),  // 5^4
        (0xC350_0000_0000_0000, 0x0000_0000_0000_0000),  // 5^5
        (0xF424_0000_0000_0000, 0x0000_0000_0000_0000),  // 5^6
        (0x9896_8000_0000_0000, 0x0000_0000_0000_0000),  // 5^7
        (0xBEBC_2000_0000_0000, 0x0000_0000_0000_0000),  // 5^8
        (0xEE6B_2800_0000_0000, 0x0000_0000_0000_0000),  // 5^9
        (0x9502_F900_0000_0000, 0x0000_0000_0000_0000),  // 5^10
        (0xBA43_B740_0000_0000, 0x0000_0000_0000_0000),  // 5^11
        (0xE8D4_A510_0000_0000, 0x0000_0000_0000_0000),  // 5^12
        (0x9184_E72A_0000_0000, 0x0000_0000_0000_0000),  // 5^13
        (0xB5E6_20F4_8000_0000, 0x0000_0000_0000_0000),  // 5^14
        (0xE35F_A931_A000_0000, 0x0000_0000_0000_0000),  // 5^15
        (0x8E1B_C9BF_0400_0000, 0x0000_0000_0000_0000),  // 5^16
        (0xB1A2_BC2E_C500_0000, 0x0000_0000_0000_0000),  // 5^17
        (0xDE0B_6B3A_7640_0000, 0x0000_0000_0000_0000),  // 5^18
        (0x8AC7_2304_89E8_0000, 0x0000_0000_0000_0000),  // 5^19
        (0xAD78_EBC5_AC62_0000, 0x0000_0000_0000_0000),  // 5^20
        (0xD8D7_26B7_177A_8000, 0x0000_0000_0000_0000),  // 5^21
        (0x8786_7832_6EAC_9000, 0x0000_0000_0000_0000),  // 5^22
        (0xA968_163F_0A57_B400, 0x0000_0000_0000_0000),  // 5^23
        (0xD3C2_1BCE_CCED_A100, 0x0000_0000_0000_0000),  // 5^24
        (0x8459_5161_4014_84A0, 0x0000_0000_0000_0000),  // 5^25
        (0xA56F_A5B9_9019_A5C8, 0x0000_0000_0000_0000),  // 5^26
        (0xCECB_8F27_F420_0F3A, 0x0000_0000_0000_0000),  // 5^27
        (0x813F_3978_F894_0984, 0x4000_0000_0000_0000),  // 5^28
        (0xA18F_07D7_36B9_0BE5, 0x5000_0000_0000_0000),  // 5^29
        (0xC9F2_C9CD_0467_4EDE, 0xA400_0000_0000_0000),  // 5^30
        (0xFC6F_7C40_4581_2296, 0x4D00_0000_0000_0000),  // 5^31
        (0x9DC5_ADA8_2B70_B59D, 0xF020_0000_0000_0000),  // 5^32
        (0xC537_1912_364C_E305, 0x6C28_0000_0000_0000),  // 5^33
        (0xF684_DF56_C3E0_1BC6, 0xC732_0000_0000_0000),  // 5^34
        (0x9A13_0B96_3A6C_115C, 0x3C7F_4000_0000_0000),  // 5^35
        (0xC097_CE7B_C907_15B3, 0x4B9F_1000_0000_0000),  // 5^36
        (0xF0BD_C21A_BB48_DB20, 0x1E86_D400_0000_0000),  // 5^37
        (0x9676_9950_B50D_88F4, 0x1314_4480_0000_0000),  // 5^38
        (0xBC14_3FA4_E250_EB31, 0x17D9_55A0_0000_0000),  // 5^39
        (0xEB19_4F8E_1AE5_25FD, 0x5DCF_AB08_0000_0000),  // 5^40
        (0x92EF_D1B8_D0CF_37BE, 0x5AA1_CAE5_0000_0000),  // 5^41
        (0xB7AB_C627_0503_05AD, 0xF14A_3D9E_4000_0000),  // 5^42
        (0xE596_B7B0_C643_C719, 0x6D9C_CD05_D000_0000),  // 5^43
        (0x8F7E_32CE_7BEA_5C6F, 0xE482_0023_A200_0000),  // 5^44
        (0xB35D_BF82_1AE4_F38B, 0xDDA2_802C_8A80_0000),  // 5^45
        (0xE035_2F62_A19E_306E, 0xD50B_2037_AD20_0000),  // 5^46
        (0x8C21_3D9D_A502_DE45, 0x4526_F422_CC34_0000),  // 5^47
        (0xAF29_8D05_0E43_95D6, 0x9670_B12B_7F41_0000),  // 5^48
        (0xDAF3_F046_51D4_7B4C, 0x3C0C_DD76_5F11_4000),  // 5^49
        (0x88D8_762B_F324_CD0F, 0xA588_0A69_FB6A_C800),  // 5^50
        (0xAB0E_93B6_EFEE_0053, 0x8EEA_0D04_7A45_7A00),  // 5^51
        (0xD5D2_38A4_ABE9_8068, 0x72A4_9045_98D6_D880),  // 5^52
        (0x85A3_6366_EB71_F041, 0x47A6_DA2B_7F86_4750),  // 5^53
        (0xA70C_3C40_A64E_6C51, 0x9990_90B6_5F67_D924),  // 5^54
        (0xD0CF_4B50_CFE2_0765, 0xFFF4_B4E3_F741_CF6D),  // 5^55
        (0x8281_8F12_81ED_449F, 0xBFF8_F10E_7A89_21A4),  // 5^56
        (0xA321_F2D7_2268_95C7, 0xAFF7_2D52_192B_6A0D),  // 5^57
        (0xCBEA_6F8C_EB02_BB39, 0x9BF4_F8A6_9F76_4490),  // 5^58
        (0xFEE5_0B70_25C3_6A08, 0x02F2_36D0_4753_D5B4),  // 5^59
        (0x9F4F_2726_179A_2245, 0x01D7_6242_2C94_6590),  // 5^60
        (0xC722_F0EF_9D80_AAD6, 0x424D_3AD2_B7B9_7EF5),  // 5^61
        (0xF8EB_AD2B_84E0_D58B, 0xD2E0_8987_65A7_DEB2),  // 5^62
        (0x9B93_4C3B_330C_8577, 0x63CC_55F4_9F88_EB2F),  // 5^63
        (0xC278_1F49_FFCF_A6D5, 0x3CBF_6B71_C76B_25FB),  // 5^64
    ]
}
