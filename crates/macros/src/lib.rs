//! The `#[instrument]` attribute of Parallax; use it through the `parallax`
//! crate (`#[parallax::instrument]`).

use proc_macro::TokenStream;
use quote::quote;
use syn::parse::{Parse, ParseStream};
use syn::{parse_macro_input, Ident, ItemFn, LitStr, Token};

/// Options: `#[instrument]`, `#[instrument(name = "x")]`,
/// `#[instrument(kind = Loop)]`.
struct Options {
    name: Option<LitStr>,
    kind: Option<Ident>,
}

impl Parse for Options {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut o = Options {
            name: None,
            kind: None,
        };
        while !input.is_empty() {
            let key: Ident = input.parse()?;
            input.parse::<Token![=]>()?;
            match key.to_string().as_str() {
                "name" => o.name = Some(input.parse()?),
                "kind" => o.kind = Some(input.parse()?),
                _ => return Err(syn::Error::new(key.span(), "expected `name` or `kind`")),
            }
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }
        }
        Ok(o)
    }
}

/// Records every call of the function as a region of kind `Function` (or
/// `kind = ...`), named after the function (or `name = "..."`).
///
/// For `async fn`, the region covers each poll of the future, not the time
/// it waits between polls.
#[proc_macro_attribute]
pub fn instrument(attr: TokenStream, item: TokenStream) -> TokenStream {
    let opts = parse_macro_input!(attr as Options);
    let mut f = parse_macro_input!(item as ItemFn);
    let name = match opts.name {
        Some(n) => n.value(),
        None => f.sig.ident.to_string(),
    };
    let kind = opts
        .kind
        .unwrap_or_else(|| Ident::new("Function", proc_macro2::Span::call_site()));
    let body = &f.block;
    let site = quote! {
        static __PARALLAX_SITE: ::parallax::__macro_support::Callsite =
            ::parallax::__macro_support::Callsite::new(
                #name,
                ::parallax::__macro_support::RegionKind::#kind,
                file!(),
                line!(),
            );
    };
    let new_body = if f.sig.asyncness.is_some() {
        quote! {{
            #site
            let __parallax_fut = async move #body;
            ::parallax::__macro_support::instrument_future(&__PARALLAX_SITE, __parallax_fut).await
        }}
    } else {
        quote! {{
            #site
            let __parallax_guard = __PARALLAX_SITE.enter();
            #body
        }}
    };
    *f.block = syn::parse2(new_body).expect("generated body parses");
    quote!(#f).into()
}
