//! SOC21 common setup as tinygrad 0.10.1's `AM_SOC21.init` does it (Linux's
//! `soc21_common_hw_init` through `nbio_v4_3`): the "no soft reset" strap of PCI
//! function 2 cleared, and the doorbell aperture (BAR 2) enabled.

use crate::error::Result;
use crate::ip::{AmDevice, Ip};
use crate::regs::generated::nbio;

/// The SOC21 block of an [`AmDevice`] (registers of NBIO 4.3.0).
#[derive(Debug, Clone, Copy)]
pub struct Soc21<'a> {
    dev: &'a AmDevice,
}

impl<'a> Soc21<'a> {
    /// The block on `dev`.
    pub fn new(dev: &'a AmDevice) -> Self {
        Soc21 { dev }
    }

    /// `AM_SOC21.init`: `RCC_DEV0_EPF2_STRAP2.STRAP_NO_SOFT_RESET_DEV0_F2` = 0 (a
    /// read-modify-write; the register lies past BAR 5 and is reached through the
    /// RSMU index/data pair), then `RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN` = 1.
    pub fn init(&self) -> Result<()> {
        let (r, t) = (self.dev.regs(), self.dev.regs().tables());
        let strap = r.resolve(Ip::Nbio, 0, t.nbio.RCC_DEV0_EPF2_STRAP2)?;
        r.update(
            strap,
            &[(nbio::RCC_DEV0_EPF2_STRAP2__STRAP_NO_SOFT_RESET_DEV0_F2_MASK, 0)],
        );
        r.write_reg(Ip::Nbio, t.nbio.RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN, 1)
    }
}
